"""ANTLR 4 grammars for field formats: validate, normalize, and constrain extracted values.

```python
from aau.grammars import load_grammar
g = load_grammar("money_amount")
g.parse("1.250,00 €")        # ParseResult(ok=True, error=None, position=None)
g.normalize("1.250,00 €")    # {"amount": "1250.00", "currency": "EUR"}
g.regex                      # a whole-value regex derived from the grammar, or None
```

The sources are ``grammars/*.g4``; ``python -m aau.grammars.build`` regenerates the parsers in
``aau/_generated/`` and ``--check`` fails when they are stale.
"""

from aau.grammars.errors import AmbiguousValue, GrammarBuildError, GrammarNotFound, InvalidValue
from aau.grammars.grammar import Grammar, ParseResult
from aau.grammars.loader import available_grammars, load_grammar

__all__ = [
    "AmbiguousValue",
    "Grammar",
    "GrammarBuildError",
    "GrammarNotFound",
    "InvalidValue",
    "ParseResult",
    "available_grammars",
    "load_grammar",
]
