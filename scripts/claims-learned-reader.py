#!/usr/bin/env python3
"""A reader learned from the training sentences, set against the detector.

Issue 43 asks whether anything but a lexical detector can reach its
targets on unseen text. This is the cheapest learned reader: a logistic
regression over word 1-2-grams and character 2-5-grams (TF-IDF), trained
on `tests/claims/corpus.toml` and `gaps.toml` only, then measured on the
held-out sets beside the detector's own verdicts, alone and combined:

- `either`: refused when the detector refuses or the reader is sure
  (p > 0.9) that it is a claim;
- `both`: refused only when the detector refuses and the reader does not
  rule it out (p > 0.1).

Prints figures per set only, never a sentence. A claim counts as caught
when any rule refuses it. Needs scikit-learn (`pip install scikit-learn`)
and the detector's verdicts, written by

    cargo test -p harmonia-contract --lib verdicts_for_a_learned_reader -- --ignored

usage: scripts/claims-learned-reader.py [--c C]   (C: inverse regularisation, default 4)
"""

import argparse
import hashlib
import json
import pathlib
import tomllib

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_union

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRAINING = ["corpus.toml", "gaps.toml"]
HELD_OUT = ["heldout.toml", "unseen.toml", "unseen2.toml", "unseen3.toml"]


def load(name, verdicts):
    """Sentences, labels (1 a claim) and the detector's verdicts, in order."""
    raw = (ROOT / "tests/claims" / name).read_bytes()
    written = verdicts[name]
    assert hashlib.sha256(raw).hexdigest() == written["sha256"], f"{name}: the verdicts are stale; write them again"
    sets = tomllib.loads(raw.decode())
    texts, labels = [], []
    for category in sets["category"]:
        for sentence in category["sentences"]:
            texts.append(sentence if isinstance(sentence, str) else sentence["text"])
            labels.append(1 if category["label"] == "claim" else 0)
    refused = np.array(written["refused"], dtype=bool)
    assert len(refused) == len(texts), f"{name}: the verdicts do not match the set"
    return texts, np.array(labels), refused


def figures(labels, refused):
    claims, benign = labels == 1, labels == 0
    return f"{refused[claims].mean():.3f} / {refused[benign].mean():.3f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--c", type=float, default=4.0)
    c = parser.parse_args().c
    verdicts = json.loads((ROOT / "target/claims-verdicts.json").read_text())
    texts, labels = [], []
    for name in TRAINING:
        t, y, _ = load(name, verdicts)
        texts += t
        labels.append(y)
    features = make_union(
        TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2),
    )
    reader = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
    reader.fit(features.fit_transform(texts), np.concatenate(labels))
    print(f"recall / false refusals (C = {c})")
    print(f"{'set':<14} {'detector':>14} {'reader':>14} {'either':>14} {'both':>14}")
    for name in HELD_OUT:
        t, y, detector = load(name, verdicts)
        p = reader.predict_proba(features.transform(t))[:, 1]
        row = [detector, p > 0.5, detector | (p > 0.9), detector & (p > 0.1)]
        print(f"{name:<14} " + " ".join(f"{figures(y, r):>14}" for r in row))


if __name__ == "__main__":
    main()
