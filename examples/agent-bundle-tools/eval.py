"""Scoring function for the tool-using example: 1.0 when the total matches to the cent."""
import re


def score(expected, predicted):
    """Return a float in [0, 1]."""
    found = re.findall(r"-?\d+(?:\.\d+)?", str(predicted).replace(",", ""))
    if not found:
        return 0.0
    return 1.0 if abs(float(found[-1]) - float(expected)) < 0.005 else 0.0
