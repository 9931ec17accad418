"""semiscale.config_context / set_config / get_config and semiscale.backends' resolver."""

import sys
import threading

import pytest

import semiscale
from semiscale import backends
from semiscale.backends import ArrayOps, get_ops, resolve_backend, set_ops, use_ops


class Marked(ArrayOps):
    """An implementation told apart by its name."""

    def __init__(self, name):
        self.name = name


@pytest.fixture(autouse=True)
def default_ops():
    # every test starts from the NumPy default and leaves the process default as it found it
    previous = set_ops(ArrayOps())
    yield
    set_ops(previous)


def _backend():
    return semiscale.get_config()["backend"]


def test_the_default_is_the_numpy_reference_and_get_config_is_a_copy():
    config = semiscale.get_config()
    assert set(config) == {"backend"}
    assert type(config["backend"]) is ArrayOps and config["backend"] is get_ops()
    config["backend"] = Marked("changed")
    assert _backend().name == "numpy"


def test_the_context_sets_the_backend_for_its_block_and_restores_it():
    outer, inner = Marked("outer"), Marked("inner")
    with semiscale.config_context(backend=outer):
        assert _backend() is outer and get_ops() is outer
        with semiscale.config_context(backend=inner):
            assert _backend() is inner
        assert _backend() is outer
        with semiscale.config_context():  # None: unchanged
            assert _backend() is outer
        with semiscale.config_context(backend="numpy"):
            assert type(_backend()) is ArrayOps
        assert _backend() is outer
    assert type(_backend()) is ArrayOps


def test_the_context_restores_the_backend_after_an_exception():
    with pytest.raises(RuntimeError, match="inside"), semiscale.config_context(backend=Marked("x")):
        raise RuntimeError("inside")
    assert _backend().name == "numpy"


def test_the_context_and_use_ops_are_one_mechanism():
    # config_context is use_ops: they nest into each other
    mine = Marked("mine")
    with use_ops(mine):
        assert _backend() is mine
        with semiscale.config_context(backend=Marked("inner")):
            assert get_ops().name == "inner"
        assert get_ops() is mine


def test_set_config_changes_the_default_and_a_context_still_wins_in_its_block():
    default = Marked("default")
    assert semiscale.set_config(backend=default) is None
    assert _backend() is default
    semiscale.set_config()  # None: unchanged
    assert _backend() is default
    block = Marked("block")
    with semiscale.config_context(backend=block):
        semiscale.set_config(backend=Marked("later"))
        assert _backend() is block
    assert _backend().name == "later"
    semiscale.set_config(backend="numpy")
    assert type(_backend()) is ArrayOps


def test_a_context_belongs_to_its_thread_and_the_default_to_every_thread():
    seen = {}
    in_block, main_checked = threading.Event(), threading.Event()

    def other_thread():
        seen["start"] = _backend().name
        with semiscale.config_context(backend=Marked("theirs")):
            in_block.set()
            main_checked.wait(10)
            seen["own block"] = _backend().name
        seen["after"] = _backend().name

    semiscale.set_config(backend=Marked("default"))
    with semiscale.config_context(backend=Marked("mine")):
        thread = threading.Thread(target=other_thread)
        thread.start()
        assert in_block.wait(10)
        # the other thread's block does not reach this one, nor does this one reach it
        assert _backend().name == "mine"
        main_checked.set()
        thread.join(10)
    assert seen == {"start": "default", "own block": "theirs", "after": "default"}


def test_a_default_set_in_another_thread_is_seen_here():
    thread = threading.Thread(target=semiscale.set_config, kwargs={"backend": Marked("shared")})
    thread.start()
    thread.join(10)
    assert _backend().name == "shared"


def test_names_and_instances_resolve():
    assert type(resolve_backend(None)) is ArrayOps
    assert type(resolve_backend("numpy")) is ArrayOps
    mine = Marked("mine")
    assert resolve_backend(mine) is mine
    assert backends.resolve_backend is resolve_backend
    assert backends.ArrayOps is semiscale.linalg.ops.ArrayOps
    assert backends.use_ops is semiscale.linalg.ops.use_ops


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("cuda", r"backend must be one of 'numpy', 'dask', 'torch'.*got 'cuda'"),
        ("NumPy", r"one of 'numpy'.*got 'NumPy'"),
        (3, r"ArrayOps instance or None; got 3"),
        (ArrayOps, r"got <class .*ArrayOps'> \(a class: pass an instance, ArrayOps\(...\)\)"),
    ],
)
def test_a_bad_backend_is_refused_naming_the_choices(value, message):
    for call in (resolve_backend, lambda v: semiscale.set_config(backend=v)):
        with pytest.raises(ValueError, match=message):
            call(value)
    with pytest.raises(ValueError, match=message), semiscale.config_context(backend=value):
        pytest.fail("the block ran with a bad backend")
    assert type(_backend()) is ArrayOps


def test_an_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'NumpyOps'"):
        backends.NumpyOps  # noqa: B018


@pytest.mark.parametrize(
    ("name", "attribute", "missing", "extra"),
    [
        ("dask", "DaskOps", "distributed", "distributed"),
        ("dask", "DaskOps", "dask.array", "distributed"),
        ("torch", "TorchOps", "torch", "gpu"),
    ],
)
def test_a_missing_optional_library_names_its_extra(monkeypatch, name, attribute, missing, extra):
    # None in sys.modules makes `import missing` fail as when the library is not installed
    monkeypatch.setitem(sys.modules, missing, None)
    install = f'pip install "semiscale\\[{extra}\\]"'
    library = missing.split(".")[0]
    message = rf"backend='{name}' \(semiscale.backends.{attribute}\) needs .*{library}.*{install}"
    with pytest.raises(ImportError, match=message):
        getattr(backends, attribute)
    with pytest.raises(ImportError, match=message):
        resolve_backend(name)
    with pytest.raises(ImportError, match=message):
        semiscale.set_config(backend=name)
    with pytest.raises(ImportError, match=message), semiscale.config_context(backend=name):
        pytest.fail("the block ran without its backend")
    assert type(_backend()) is ArrayOps


def test_the_configuration_functions_are_exported_at_the_top_level():
    from semiscale import _config

    for name in ("config_context", "get_config", "set_config"):
        assert name in semiscale.__all__
        assert getattr(semiscale, name) is getattr(_config, name)


def test_dask_names_the_dask_backend():
    pytest.importorskip("distributed", reason="the distributed extra (dask, distributed) is absent")
    from semiscale.backends._dask import DaskOps

    assert backends.DaskOps is DaskOps
    # no client yet: DaskOps looks the default client up at its first product
    assert type(resolve_backend("dask")) is DaskOps
    with semiscale.config_context(backend="dask"):
        assert type(_backend()) is DaskOps
    assert type(_backend()) is ArrayOps


def test_torch_names_the_torch_backend():
    torch = pytest.importorskip("torch", reason="the gpu extra (torch) is absent")
    from semiscale.backends._torch import TorchOps

    assert backends.TorchOps is TorchOps
    ops = resolve_backend("torch")
    assert type(ops) is TorchOps
    assert ops.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    semiscale.set_config(backend="torch")
    assert type(_backend()) is TorchOps
