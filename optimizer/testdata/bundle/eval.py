def score(expected, predicted):
    return 1.0 if expected.strip() == str(predicted).strip() else 0.0
