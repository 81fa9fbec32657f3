// Calendar dates as written in documents: numeric with one kind of separator
// (2024-03-04, 04/03/2024, 4.3.2024) and with English month names
// (March 4, 2024; 4 March 2024; 4 Mar 2024; 4-Mar-2024; Monday, 4th of March 2024).
//
// The grammar is regular on purpose: aau.grammars derives a regex from it for constrained
// decoding. Range checks the regex cannot express compactly (days per month, leap years,
// ordinal suffixes, weekday names) and the day/month order of 03/04/2024 are decided by the
// normalizer (aau/grammars/normalizers/dates.py), which reports ambiguity instead of guessing.
// Years are four digits from 1000 to 2999; two-digit years are rejected (their century is a guess).
grammar date;

options { caseInsensitive = true; }

date_value : (WEEKDAY COMMA? SPACE)? (numeric_date | day_first | month_first) EOF ;

// Year first is always year-month-day (ISO 8601 order).
numeric_date
    : year DASH month_number DASH day_number
    | year SLASH month_number SLASH day_number
    | year DOT month_number DOT day_number
    | day_number DASH day_number DASH year
    | day_number SLASH day_number SLASH year
    | day_number DOT day_number DOT year
    ;

day_first
    : day_number ORDINAL? SPACE (OF SPACE)? month_name DOT? (COMMA SPACE? | SPACE) year
    | day_number DASH month_name DASH year
    ;

month_first : month_name DOT? SPACE day_number ORDINAL? (COMMA SPACE? | SPACE) year ;

month_name
    : JANUARY | FEBRUARY | MARCH | APRIL | MAY | JUNE
    | JULY | AUGUST | SEPTEMBER | OCTOBER | NOVEMBER | DECEMBER
    ;

year : (ONE | TWO) digit digit digit ;

month_number : ZERO? nonzero | ONE (ZERO | ONE | TWO) ;

// 1..31, optionally zero-padded; which of two such numbers is the month is the normalizer's call.
day_number : ZERO? nonzero | (ONE | TWO) digit | THREE (ZERO | ONE) ;

digit : ZERO | nonzero ;

nonzero : ONE | TWO | THREE | FOUR_TO_NINE ;

// One token per digit keeps the lexer exactly as strict as the derived regex.
ZERO : '0' ;
ONE : '1' ;
TWO : '2' ;
THREE : '3' ;
FOUR_TO_NINE : [4-9] ;

DASH : '-' ;
SLASH : '/' ;
DOT : '.' ;
COMMA : ',' ;
SPACE : ' ' ;
OF : 'of' ;
ORDINAL : 'st' | 'nd' | 'rd' | 'th' ;

JANUARY : 'january' | 'jan' ;
FEBRUARY : 'february' | 'feb' ;
MARCH : 'march' | 'mar' ;
APRIL : 'april' | 'apr' ;
MAY : 'may' ;
JUNE : 'june' | 'jun' ;
JULY : 'july' | 'jul' ;
AUGUST : 'august' | 'aug' ;
SEPTEMBER : 'september' | 'sept' | 'sep' ;
OCTOBER : 'october' | 'oct' ;
NOVEMBER : 'november' | 'nov' ;
DECEMBER : 'december' | 'dec' ;

WEEKDAY
    : 'monday' | 'mon' | 'tuesday' | 'tue' | 'tues' | 'wednesday' | 'wed'
    | 'thursday' | 'thu' | 'thurs' | 'friday' | 'fri' | 'saturday' | 'sat' | 'sunday' | 'sun'
    ;
