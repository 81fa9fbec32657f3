// An ISO 4217 currency code on its own: EUR, USD, CHF. Upper case only, as the standard writes
// them; the list itself is in iso4217.g4.
grammar currency_code;

import iso4217;

currency_code_value : CURRENCY_CODE EOF ;
