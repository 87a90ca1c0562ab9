"""Lesson T5's mutants of our own from the ninth learner's walk (learner9, 2026-12-04): each was caught with a
message that said what was expected and what came back, or what the code refused, and named no cause, until
the check named with it was mended.  Only make check runs them (table=False, not in §8); each must be caught by
its test, whose message names its cause (a key of t5_mistakes.CAUSES, LEARNER9_CAUSES here).  t5_mistakes.py
gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# learner9-row-stride-in-elements, the same substitution as §8's stride-in-elements, is not kept here: that
# one names the cause now (cause="stride-in-elements" in t5_mistakes.py).
# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER9_CAUSES = {
    "last-wave-alone": ("正好是薄的最后一波", "is the thin last wave alone"),
    "stride-in-elements": ("它拿元素个数来量行距", "it measures the row stride in elements"),
}

LEARNER9 = (
    own(
        "learner9-split-last-wave-alone",
        "T5.3",
        "stream_k_split in mode auto sends the thin last wave alone to stream-K (rest, not rest + num_sms): the "
        "message gave the expected and the returned pair alone (learner9)",
        "4.3",
        "        sk_tiles = num_tiles if full_waves == 0 else rest + num_sms\n",
        "        sk_tiles = num_tiles if full_waves == 0 else rest\n",
        "test_stream_k_split[300-8-132-auto-want3]",
        "last-wave-alone",
    ),
)
