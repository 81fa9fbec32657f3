// Money amounts with a currency symbol or ISO 4217 code before or after, or none:
// $1,250.00  -$5  US$ 12  1.250,00 €  EUR 1 250,50  1'250.00 CHF  USD1250  1250
//
// Group separators: ',' '.' (each with the other as decimal separator), space, no-break space,
// narrow no-break space, and apostrophes ' and ’ (Swiss), in groups of three digits after a
// lead of one to three. Indian lakh grouping (1,25,000) is not accepted.
// Which role a lone '.' or ',' plays (1,250 / 1.250) is decided by the normalizer
// (aau/grammars/normalizers/money.py), which reports ambiguity instead of guessing.
// Symbols map to one currency each, by the table in that module (CLDR's English defaults:
// $ is USD, ¥ is JPY); symbols that several currencies share equally (kr, Fr.) are not accepted.
grammar money_amount;

import iso4217;

money_value
    : MINUS currency gap? amount
    | currency gap? MINUS? amount
    | MINUS? amount (gap? currency)?
    ;

currency : CURRENCY_CODE | SYMBOL ;

gap : SPACE | NO_BREAK_SPACE | NARROW_NO_BREAK_SPACE ;

amount
    : DIGIT+ ((DOT | COMMA) DIGIT+)?
    | group_lead (COMMA group)+ (DOT DIGIT+)?
    | group_lead (DOT group)+ (COMMA DIGIT+)?
    | group_lead (gap group)+ ((DOT | COMMA) DIGIT+)?
    | group_lead (APOSTROPHE group)+ ((DOT | COMMA) DIGIT+)?
    ;

group_lead : DIGIT DIGIT? DIGIT? ;

group : DIGIT DIGIT DIGIT ;

DIGIT : [0-9] ;
DOT : '.' ;
COMMA : ',' ;
APOSTROPHE : '\'' | '\u2019' ;
MINUS : '-' | '\u2212' ;
SPACE : ' ' ;
NO_BREAK_SPACE : '\u00A0' ;
NARROW_NO_BREAK_SPACE : '\u202F' ;

SYMBOL
    : '$' | 'US$' | 'CA$' | 'A$' | 'AU$' | 'NZ$' | 'HK$' | 'S$' | 'R$' | 'MX$'
    | '\u20AC' | '\u00A3' | '\u00A5' | 'CN\u00A5' | '\u20B9' | '\u20A9' | '\u20BD' | '\u20BA'
    | '\u20AA' | '\u20AB' | '\u0E3F' | '\u20B4' | '\u20A6' | '\u20B1' | 'z\u0142' | 'K\u010D'
    ;
