"""Request parsing that turns hostile JSON into a 400, never a 500."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from metrics.core.text import has_nul


class SafeJSONParser(JSONParser):
    """DRF's JSON parser, refusing bodies nested too deeply for Python's recursion
    limit and strings holding NUL characters (PostgreSQL text cannot store them)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
        if has_nul(data):
            raise ParseError("JSON parse error - strings may not contain NUL characters")
        return data
