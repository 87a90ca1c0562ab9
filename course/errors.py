"""An error's chain, walked once for every check that reads one: the tests' cause finders (tests/), the
grade's words for a failure (tools/core/failure_words.py) and the course's own readers (course/messages.py,
course/seam.py)."""


def error_chain(exc, *, suppressed=False):
    """exc and the errors behind it, outermost first: each one's __cause__, else its __context__.

    By default a context hidden by `raise ... from None` ends the chain, as Python's traceback shows it.
    suppressed=True walks it too: the checks that look for a learner's frame or Triton's complaint anywhere
    behind an error use that, since a caller may re-raise a learner's error `from None`.  A loop in the
    chain (an error that is its own context, through others) ends it."""
    chain, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        hidden = exc.__suppress_context__ and not suppressed
        exc = exc.__cause__ if exc.__cause__ is not None else (None if hidden else exc.__context__)
    return chain


def root_cause(exc):
    """The last error of exc's `raise ... from` links (its __cause__, that one's, ...): exc itself if it
    has none.  Contexts (an error raised while handling another) are not followed."""
    seen = set()
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__
    return exc
