"""The shipped attacker's training record lists every stage, and the attacker guide's commands are
the ones that made it (their settings are the record's, stage by stage)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from dpcore.attack import paper_setting as paper
from dpcore.attack.page_view import TRAINING_RECORD
from dpcore.attack.training import training_lineage
from dpcore.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guides" / "attacker.md"


def _record() -> dict:
    return json.loads(TRAINING_RECORD.read_text(encoding="utf-8"))


def test_the_record_lists_every_stage_with_its_sources_epochs_device_seconds_and_accuracy() -> None:
    rec = _record()
    lineage = rec["lineage"]
    assert lineage == training_lineage(rec)  # what the nested records say, oldest first
    assert [s["stage"] for s in lineage] == [1, 2, 3]
    for s in lineage:
        assert s["sources"] and s["epochs"] > 0 and s["steps"] > 0 and s["train_seconds"] > 0
        assert 0 < s["heldout_top1"] <= s["heldout_top5"] < 1
    assert lineage[0]["device"] == "cpu" and set(lineage[0]["sources"]) == {"pang_lee", "wiki", "wordnet"}
    assert all(s["device"].startswith("cuda") and set(s["sources"]) == {"tweets"} for s in lineage[1:])
    assert lineage[-1]["heldout_top1"] == rec["heldout_top1"] and lineage[-1]["steps"] == rec["steps"]


def _guide_commands() -> list[list[str]]:
    text = GUIDE.read_text(encoding="utf-8")
    shown = "\n".join(re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M))  # not CI's stand-ins
    lines = [
        ln.strip() for ln in shown.splitlines() if ln.strip().startswith("python -m dpcore train-attacker")
    ]
    return [shlex.split(ln.split("#")[0])[3:] for ln in lines]


def test_the_guides_commands_are_the_records_stages() -> None:
    parser = build_parser()
    cmds = [parser.parse_args(c) for c in _guide_commands()]
    runs = [a for a in cmds if not a.resume]
    resumed = [a for a in cmds if a.resume]
    lineage = _record()["lineage"]
    records = []
    r: dict | None = _record()
    while r is not None:
        records.append(r)
        r = r.get("init_record")
    records.reverse()
    assert len(runs) == len(lineage) == len(records) == 3
    for k, (args, stage, rec) in enumerate(zip(runs, lineage, records, strict=True)):
        cfg = rec["config"]
        assert set(args.sources.split(",")) == set(stage["sources"]), k
        assert float(args.seed) == cfg["seed"] and int(args.batch_size) == cfg["batch_size"], k
        assert float(args.lr) == cfg["lr"] and int(args.warmup_steps) == cfg["warmup_steps"], k
        assert int(args.threads) == cfg["threads"], k
        assert (args.device == "cuda") == stage["device"].startswith("cuda"), k
        if cfg.get("epochs") is not None:
            assert float(args.epochs) == cfg["epochs"], k
        else:  # a wall-clock stage: the same budget
            assert args.epochs is None and float(args.minutes) == cfg["minutes"], k
        # each stage continues from the one before
        assert (args.init is None) == (k == 0) and (k == 0 or args.init == runs[k - 1].output), k
    # the --resume line repeats the last stage's command
    assert len(resumed) == 1
    assert {k: v for k, v in vars(resumed[0]).items() if k != "resume"} == {
        k: v for k, v in vars(runs[-1]).items() if k != "resume"
    }


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_the_guide_lists_what_differs_from_the_paper_as_the_page_does() -> None:
    guide = _plain(GUIDE.read_text(encoding="utf-8"))
    for item in paper.DIFFERENCES:
        assert _plain(item) in guide, item[:40]
