"""Block mode on hand-written answers: realistic faithful answers in the styles LLMs write (lists, citations, hedges,
numbers written unlike the context, closings...) with hallucinated twins (``probes/realistic_answers.py``, 207, round
13), and cases that exercise each rewriting rule (``probes/rule_cases.py``, 255, round 14). Each answer is checked
whole and streamed word by word with the shipped model and ``Policy(action="block")``; prints, per style or rule, the
faithful answers blocked and the hallucinations passed (a regression harness for the rules, not a quality figure:
the cases were written against this code).

    python benchmarks/answer_probes.py [--no-relevance] [--show]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "probes"))

from realistic_answers import T  # noqa: E402
from rule_cases import CASES  # noqa: E402

from guardrail.checks.evaluator import Evaluator  # noqa: E402
from guardrail.guard import Guard  # noqa: E402
from guardrail.policy import Policy  # noqa: E402
from guardrail.scorers.nli import NLIScorer, default_nli_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-relevance", action="store_true", help="faithfulness only (retrieval_relevance=None)")
    ap.add_argument("--show", action="store_true", help="print every faithful answer blocked and hallucination passed")
    ap.add_argument("--model", help="an NLI model directory (its guardrail.json's calibration and threshold decide); "
                                    "default: the shipped model")
    args = ap.parse_args()
    policy = Policy(action="block", retrieval_relevance=None) if args.no_relevance else Policy(action="block")
    guard = Guard(Evaluator(nli=NLIScorer(args.model or default_nli_model())), policy)
    rows = [(i, f"style:{style}", q, ctx, a, faithful) for i, style, q, ctx, a, faithful in T]
    rows += [(c["id"], f"rule:{c['rule']}", c["q"], c["ctx"], c["a"], c["faithful"]) for c in CASES]
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for i, group, q, ctx, a, faithful in rows:
        if faithful is None:
            continue
        whole = guard.check(q, ctx, a)
        stream = guard.stream(q, ctx)
        released = "".join(stream.feed(p) for p in re.findall(r"\S+\s*|\s+", a))
        end = stream.finish()
        released += end.text
        for mode, action in (("whole", whole.action), ("stream", end.verdict.action)):
            wrong = (action == "block") if faithful else (action != "block")
            table[group][f"{'faithful' if faithful else 'halluc'}"] += mode == "whole"
            table[group][f"{mode}_{'false_block' if faithful else 'miss'}"] += wrong
        if not faithful and end.verdict.action == "block" and released == a:
            table[group]["stream_released_all"] += 1
        if args.show and ((whole.action == "block") == bool(faithful)):
            f = whole.evaluation.faithfulness if whole.evaluation else None
            read = "; ".join(f"{s.hypothesis!r}={'-' if s.score is None else round(s.score, 3)}"
                             for s in (f.sentences if f else []))
            print(f"[{i} {group}] {'FALSE BLOCK' if faithful else 'MISS'} {whole.action} failed={whole.failed_checks} "
                  f"Q={q!r}\n    A={a!r}\n    {read}")
    print("group | faithful | blocked (whole / stream) | hallucinated | passed (whole / stream) | stream released a "
          "blocked hallucination whole")
    total: collections.Counter[str] = collections.Counter()
    for group in sorted(table):
        c = table[group]
        total.update(c)
        print(f"{group} | {c['faithful']} | {c['whole_false_block']} / {c['stream_false_block']} | {c['halluc']} | "
              f"{c['whole_miss']} / {c['stream_miss']} | {c['stream_released_all']}")
    print(f"TOTAL | {total['faithful']} | {total['whole_false_block']} / {total['stream_false_block']} | "
          f"{total['halluc']} | {total['whole_miss']} / {total['stream_miss']} | {total['stream_released_all']}")


if __name__ == "__main__":
    main()
