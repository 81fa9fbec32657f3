// Percentages: 12.5%, 12,5 %, -3%, +0.25 %, 7 percent, 7 per cent.
// Percentages take no group separators, so a single '.' or ',' is always the decimal separator.
// The space before '%' may be a plain, no-break or narrow no-break space (fr: "12,5 %").
grammar percentage;

options { caseInsensitive = true; }

percentage_value : SIGN? number (space? PERCENT_SIGN | space PERCENT_WORD) EOF ;

number : DIGIT+ ((DOT | COMMA) DIGIT+)? ;

space : SPACE | NO_BREAK_SPACE | NARROW_NO_BREAK_SPACE ;

DIGIT : [0-9] ;
DOT : '.' ;
COMMA : ',' ;
SIGN : '+' | '-' | '\u2212' ;
PERCENT_SIGN : '%' ;
PERCENT_WORD : 'percent' | 'per cent' | 'pct' ;
SPACE : ' ' ;
NO_BREAK_SPACE : '\u00A0' ;
NARROW_NO_BREAK_SPACE : '\u202F' ;
