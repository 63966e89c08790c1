"""Scoring function for the example bundle: 1.0 when the predicted queue matches."""
import string


def _normalize(text):
    text = str(text).strip().lower()
    return text.strip(string.punctuation + string.whitespace)


def score(expected, predicted):
    """Return a float in [0, 1]."""
    return 1.0 if _normalize(expected) == _normalize(predicted) else 0.0
