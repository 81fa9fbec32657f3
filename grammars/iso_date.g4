// A strict ISO 8601 calendar date, YYYY-MM-DD, zero-padded: 2024-03-04.
// Whether the day exists in that month and year is checked by the normalizer.
grammar iso_date;

iso_date_value : year DASH month DASH day EOF ;

year : digit digit digit digit ;

month : ZERO nonzero | ONE (ZERO | ONE | TWO) ;

day : ZERO nonzero | (ONE | TWO) digit | THREE (ZERO | ONE) ;

digit : ZERO | nonzero ;

nonzero : ONE | TWO | THREE | FOUR_TO_NINE ;

ZERO : '0' ;
ONE : '1' ;
TWO : '2' ;
THREE : '3' ;
FOUR_TO_NINE : [4-9] ;
DASH : '-' ;
