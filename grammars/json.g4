// JSON (RFC 8259). Recursive, so it has no regex: values are validated by the parser only.
grammar json;

json_value : value EOF ;

value : object | array | STRING | NUMBER | TRUE | FALSE | NULL ;

object : '{' (pair (',' pair)*)? '}' ;

pair : STRING ':' value ;

array : '[' (value (',' value)*)? ']' ;

TRUE : 'true' ;
FALSE : 'false' ;
NULL : 'null' ;

STRING : '"' (ESCAPE | SAFE_CODE_POINT)* '"' ;

fragment ESCAPE : '\\' (["\\/bfnrt] | 'u' HEX HEX HEX HEX) ;
fragment HEX : [0-9a-fA-F] ;
fragment SAFE_CODE_POINT : ~["\\\u0000-\u001F] ;

NUMBER : '-'? ('0' | [1-9] [0-9]*) ('.' [0-9]+)? ([eE] [+-]? [0-9]+)? ;

WS : [ \t\n\r]+ -> skip ;
