"""Methods of a reproduction: a registry of estimator factories.

A factory builds a fresh, unfitted estimator from the hyper-parameters chosen for a dataset
(a dict read from that dataset's CV record) and the problem: its :class:`Sizes`, the protocol,
the dataset name and the repeat's seed.  Each method names the parameter group it reads
(``"laprls"``, ``"rls"``, ...), so one CV record can tune several families of methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

__all__ = ["Method", "MethodRegistry"]


@dataclass(frozen=True)
class Method:
    """A registered method: its factory, the parameter group it reads, one line on what it is."""

    name: str
    factory: Callable
    params: str
    description: str


class MethodRegistry(Mapping):
    """Name -> :class:`Method`, in registration order (the tables' column order).

    Examples
    --------
    >>> methods = MethodRegistry()
    >>> @methods.register("RLS", params="rls", description="supervised kernel ridge")
    ... def rls(params, sizes, *, protocol, dataset, seed):
    ...     return ("estimator", params["ambient_reg"])
    >>> chosen = {"rls": {"ambient_reg": 0.1}}
    >>> methods.build("RLS", chosen, None, protocol=None, dataset="x", seed=0)
    ('estimator', 0.1)
    """

    def __init__(self):
        self._methods: dict[str, Method] = {}

    def register(self, name: str, *, params: str, description: str):
        """Decorator registering ``factory(params, sizes, *, protocol, dataset, seed)``."""

        def add(factory):
            if name in self._methods:
                raise ValueError(f"method {name!r} is registered twice")
            self._methods[name] = Method(name, factory, params, description)
            return factory

        return add

    def build(self, name: str, chosen: Mapping, sizes, *, protocol, dataset: str, seed: int):
        """A fresh estimator of method ``name`` with its group of the ``chosen`` parameters."""
        method = self[name]
        if method.params not in chosen:
            raise ValueError(
                f"method {name!r} reads parameter group {method.params!r}, but the chosen "
                f"parameters have only {sorted(chosen)}"
            )
        return method.factory(
            chosen[method.params], sizes, protocol=protocol, dataset=dataset, seed=seed
        )

    def __getitem__(self, name: str) -> Method:
        try:
            return self._methods[name]
        except KeyError:
            raise KeyError(f"unknown method {name!r}; registered: {list(self._methods)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._methods)

    def __len__(self) -> int:
        return len(self._methods)
