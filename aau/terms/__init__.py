"""The term layer: customers' domain dictionaries, matched per tenant, merged into tokens.

``TermStore`` keeps tenants and their uploads; ``TermStore.term_set(tenant)`` is what a request
is matched with (``TermSet.find`` gives ``TermHit``s with offsets); ``aau.terms.merge`` builds
the merged-token view the in-process engine reads a tenant's prompts in.
"""

from aau.terms.dictionary import Term, TermDictionary, load_dictionary, parse_dictionary
from aau.terms.matcher import TermHit, TermMatcher
from aau.terms.store import (
    DictionaryInfo,
    DictionaryUpload,
    TermSet,
    TermStore,
    shipped_dictionaries,
)

__all__ = [
    "DictionaryInfo",
    "DictionaryUpload",
    "Term",
    "TermDictionary",
    "TermHit",
    "TermMatcher",
    "TermSet",
    "TermStore",
    "load_dictionary",
    "parse_dictionary",
    "shipped_dictionaries",
]
