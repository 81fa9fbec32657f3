// Clause, section and article numbers: 7, 7.2, 7.2.1, 7a, 7.2(a), 7.2 (a)(iii), 12(1)(b),
// Section 7.2(a)(iii), Sec. 4, Clause 9, Art. 12, Paragraph 3, § 4, §4.
// The keyword is not part of the clause id: "Section 7.2(a)" normalizes to "7.2(a)".
// Labels in parentheses are one to six letters (a, iii, xviii, AA) or a number.
grammar clause_number;

options { caseInsensitive = true; }

clause_value : PREFIX? clause_id EOF ;

clause_id : NUMBER (DOT NUMBER)* LETTER? (DOT | sub_item+)? ;

sub_item : SPACE? LPAREN (label | NUMBER) RPAREN ;

label : LETTER LETTER? LETTER? LETTER? LETTER? LETTER? ;

// The keyword and the space after it are one token: inside "(art)" no space follows, so the
// lexer reads letters there, exactly as the derived regex does.
PREFIX
    : ('section' | 'sect' | 'sec' | 'clause' | 'cl' | 'article' | 'art' | 'paragraph' | 'para') '.'? ' '
    | '\u00A7' ' '?
    ;
NUMBER : [0-9]+ ;
// One token per letter, so that a label's length is the parser's to check.
LETTER : [a-z] ;
DOT : '.' ;
LPAREN : '(' ;
RPAREN : ')' ;
SPACE : ' ' ;
