"""course/errors.py: the one walk of an error's chain that the tests' cause finders, the grade's words and the
course's readers share.  Each case builds its chain by raising, as the checks meet them."""

from course.errors import error_chain, root_cause


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the chain is what is read
        return e
    raise AssertionError("fn raised nothing")


def from_(outer, inner):
    """outer raised `from` inner."""

    def go():
        try:
            raise inner
        except Exception as e:  # noqa: BLE001 - any error: it becomes the cause
            raise outer from e

    return raised(go)


def while_handling(outer, inner, *, hide=False):
    """outer raised while handling inner; hide: `raise outer from None`."""

    def go():
        try:
            raise inner
        except Exception:  # noqa: BLE001 - any error: it becomes the context
            if hide:
                raise outer from None
            raise outer  # noqa: B904 - the context is what this builds

    return raised(go)


def test_causes_and_contexts_outermost_first():
    e = from_(RuntimeError("outer"), while_handling(KeyError("middle"), ValueError("inner")))
    assert [type(x).__name__ for x in error_chain(e)] == ["RuntimeError", "KeyError", "ValueError"]
    assert type(root_cause(e)).__name__ == "KeyError"  # a context is no cause: root_cause stops there


def test_a_hidden_context_ends_the_chain_unless_asked_for():
    e = while_handling(TypeError("outer"), ValueError("hidden"), hide=True)
    assert [type(x).__name__ for x in error_chain(e)] == ["TypeError"]
    assert [type(x).__name__ for x in error_chain(e, suppressed=True)] == ["TypeError", "ValueError"]


def test_a_loop_in_the_chain_ends_it():
    a, b = ValueError("a"), KeyError("b")
    a.__cause__, b.__cause__ = b, a
    assert error_chain(a) == [a, b]
    assert root_cause(a) is b
    lone = ValueError("alone")
    assert error_chain(lone) == [lone] and root_cause(lone) is lone
