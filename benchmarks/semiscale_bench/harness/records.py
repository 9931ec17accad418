"""Resumable results: JSON lines, one record per measured unit of work.

A record is a flat JSON object.  Its key is :data:`KEY`: the paper (or study), the experiment
within it (``"table"``, ``"cv"``, ``"fig1"``, ...), the dataset, the method, an optional
``setting`` for sweeps (``"m=4%"``), and the repeat.  Records are appended as they are made,
so an interrupted run loses at most the fit in progress; a rerun skips the keys already
present (unless forced) and the last record of a key wins.  Every record carries the digest of
the protocol that made it and the id of the run (its start time): records of another protocol
are never mixed into a report.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

__all__ = ["KEY", "RecordStore", "jsonable"]

KEY = ("paper", "experiment", "dataset", "method", "setting", "repeat")


def jsonable(obj):
    """``obj`` with numpy scalars and arrays turned into plain Python values."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return obj


def _key(record) -> tuple:
    return tuple(record.get(k, "") for k in KEY)


class RecordStore:
    """The records of one protocol in ``<folder>/records.jsonl`` (and its runs in ``runs.jsonl``).

    Parameters
    ----------
    folder : path-like
        Output folder (created when missing).
    paper : str
        Paper or study name, the first field of every key.
    digest : str
        :meth:`Protocol.digest` of the protocol in use.
    force : bool, default=False
        Records already present are recomputed (:meth:`done` is False); records of another
        protocol are dropped instead of raising.

    Raises
    ------
    ValueError
        When the folder holds records of ``paper`` made with another protocol and ``force`` is
        False: mixing them would report numbers of two protocols as one.
    """

    def __init__(self, folder, paper: str, digest: str, *, force: bool = False):
        self.folder = Path(folder)
        self.path = self.folder / "records.jsonl"
        self.paper, self.digest, self.force = paper, digest, force
        self._records: dict[tuple, dict] = {}
        rows = self._read(self.path)
        foreign = [r for r in rows if r.get("paper") == paper and r.get("protocol") != digest]
        if foreign and not force:
            digests = sorted({r.get("protocol") for r in foreign})
            raise ValueError(
                f"{self.path} holds {len(foreign)} records of {paper} made with another protocol "
                f"(digest {', '.join(map(str, digests))}, this one {digest}, e.g. a --quick run): "
                "use another output folder, or --force to replace them"
            )
        for row in rows:
            if row.get("paper") != paper or row.get("protocol") == digest:
                self._records[_key(row)] = row
        if foreign:  # forced: rewrite the file without them
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(self.path, "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in self._records.values())
        self.run_id = None

    @staticmethod
    def _read(path):
        if not path.exists():
            return []
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]

    # -------------------------------------------------------------------------------- writing
    def start_run(self, **info) -> str:
        """Append a run description (command, machine, ...) to ``runs.jsonl``; returns its id."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run_id = time.strftime("%Y-%m-%d %H:%M:%S")
        earlier = {row.get("run") for row in self._read(self.folder / "runs.jsonl")}
        if self.run_id in earlier:  # two runs within a second (tests): keep ids unique
            self.run_id += f" #{sum(str(r).startswith(self.run_id) for r in earlier)}"
        row = {"run": self.run_id, "paper": self.paper, "protocol": self.digest, **info}
        with open(self.folder / "runs.jsonl", "a") as f:
            f.write(json.dumps(jsonable(row)) + "\n")
        return self.run_id

    def end_run(self, **info) -> None:
        """Append the run's closing facts (wall seconds, ...) to ``runs.jsonl``."""
        row = {"run": self.run_id, "paper": self.paper, "protocol": self.digest, "end": True}
        with open(self.folder / "runs.jsonl", "a") as f:
            f.write(json.dumps(jsonable({**row, **info})) + "\n")

    def put(self, experiment, dataset, method, repeat=0, setting="", **fields) -> dict:
        """Append one record (replacing any earlier one of the same key) and return it."""
        record = {
            "paper": self.paper,
            "experiment": experiment,
            "dataset": dataset,
            "method": method,
            "setting": setting,
            "repeat": int(repeat),
            "protocol": self.digest,
            "run": self.run_id,
            **jsonable(fields),
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._records[_key(record)] = record
        return record

    # -------------------------------------------------------------------------------- reading
    def get(self, experiment, dataset, method, repeat=0, setting=""):
        """The record of this key, or None."""
        return self._records.get((self.paper, experiment, dataset, method, setting, int(repeat)))

    def done(self, experiment, dataset, method, repeat=0, setting="") -> bool:
        """Whether this key needs no work: present, and not forced."""
        return not self.force and self.get(experiment, dataset, method, repeat, setting) is not None

    def select(self, experiment=None, dataset=None, method=None) -> list[dict]:
        """Records matching the given fields, in the order they were first written."""
        return [
            r
            for r in self._records.values()
            if r["paper"] == self.paper
            and experiment in (None, r["experiment"])
            and dataset in (None, r["dataset"])
            and method in (None, r["method"])
        ]

    def runs(self) -> list[dict]:
        """Run descriptions of this protocol, merged with their closing facts, oldest first."""
        merged: dict[str, dict] = {}
        for row in self._read(self.folder / "runs.jsonl"):
            if row.get("paper") == self.paper and row.get("protocol") == self.digest:
                merged.setdefault(row["run"], {}).update(row)
        used = {r.get("run") for r in self._records.values()}
        return [row for run, row in merged.items() if run in used]
