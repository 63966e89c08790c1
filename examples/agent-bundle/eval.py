"""Exact match of the predicted queue name with the expected one, ignoring case, blanks and
punctuation: 1.0 when they match, else 0.0 (the optimizer shows the proposer this paragraph)."""
import string

# Names the metric in the optimizer's results ("metric"); optional.
METRIC = "exact_match"


def _normalize(text):
    text = str(text).strip().lower()
    return text.strip(string.punctuation + string.whitespace)


def score(expected, predicted):
    """Return a float in [0, 1], or a pair (score, feedback): the optimizer shows the
    feedback to the proposer model beside each row the agent gets wrong."""
    if _normalize(expected) == _normalize(predicted):
        return 1.0
    if " " in _normalize(predicted):
        return 0.0, "answer with the queue name only, no other words (expected %r)" % expected
    return 0.0, "wrong queue: %r instead of %r" % (predicted, expected)
