"""Batch checks on Ray Data: the rows of ``guardrail check`` scored by a pool of actors, one model load each.

``guardrail check FILE --ray [ADDRESS]`` reads, decides and writes exactly as the single-process command does; only
the loop that evaluates rows runs here (:func:`check_records`): each actor builds the CLI's own row checker once (its
evaluator: the models, loaded once per actor) and checks batches of rows with it (``map_batches`` over an
``ActorPoolStrategy``). Records travel pickled and come back as the very :class:`~guardrail.cli.gate.RowResult` of the
single process, in input order, so every output format (JSON Lines, JUnit, the summary, HTML) is the same row for row.
:func:`guardrail.batch.check_dataset` runs the same checker over a Ray Dataset of your own.

Ray is an optional dependency (``pip install 'rag-guardrail[ray]'``); nothing here imports it before it is used.
"""

from __future__ import annotations

import math
import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from guardrail.errors import ConfigurationError, GuardrailError, MissingDependencyError

if TYPE_CHECKING:
    import ray.data

    from guardrail.cli.gate import RowResult
    from guardrail.cli.records import Record

__all__ = ["BATCH_SIZE", "CheckActor", "RowCheck", "actor_pool", "check_records", "import_ray", "pyarrow",
           "ray_session"]

#: rows an actor checks per call: small, so the progress moves and the rows of a short file spread over the actors
BATCH_SIZE = 16


class RowCheck(Protocol):
    """What checks one row (``guardrail.cli.check.RowChecker``): built once per actor, then called per row."""

    def __call__(self, record: Record, /) -> RowResult: ...

    @property
    def model_threshold(self) -> float | None: ...


def import_ray() -> Any:
    """``ray`` (with Ray Data), or a clear error naming the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data is a separate part of the ray package)
    except ImportError as exc:
        raise MissingDependencyError(
            f"--ray needs Ray with Ray Data ({exc}); install it with: pip install 'rag-guardrail[ray]'") from None
    return ray


def pyarrow() -> Any:
    """``pyarrow`` (a dependency of Ray Data), as Any: it ships no type information."""
    import importlib

    return importlib.import_module("pyarrow")


@contextmanager
def ray_session(address: str | None) -> Iterator[None]:
    """Ray for the run. An already initialized Ray (a notebook, a test, a Ray job) is used as it is; ``None`` or
    ``"local"`` starts Ray on this machine with the CPUs this process may use, stopped at the end; ``"auto"``,
    ``HOST:PORT`` or ``ray://HOST:PORT`` connects to a running cluster (where guardrail must be installed too)."""
    ray = import_ray()
    if ray.is_initialized():
        yield
        return
    if address in (None, "local"):
        ray.init(address="local", num_cpus=_local_cpus(), include_dashboard=False, log_to_driver=False)
    else:
        try:
            ray.init(address=address, log_to_driver=False)
        except ConnectionError as exc:
            raise ConfigurationError(f"--ray {address}: cannot connect to a Ray cluster there ({exc})") from None
    try:
        yield
    finally:
        ray.shutdown()


def _local_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what `taskset` or the container lets this process use
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def actor_pool(actors: int | None) -> Any:
    """The actor pool: ``actors`` actors of one CPU each, else one per CPU of the Ray cluster."""
    ray = import_ray()
    if actors is not None and actors < 1:
        raise ConfigurationError(f"--ray-actors {actors}: give a whole number >= 1")
    size = actors if actors is not None else max(1, int(ray.cluster_resources().get("CPU", 1)))
    return ray.data.ActorPoolStrategy(size=size)


class CheckActor:
    """One actor of the pool: the row checker, built once (one model load), and its thread count. An error of ours
    (a model that cannot be loaded, ...) is kept and handed back with the rows: Ray's wrappers would lose its type."""

    def __init__(self, make_check: Callable[[], RowCheck], threads: int | None) -> None:
        if threads is not None:  # the actor's own process: its onnxruntime threads, read by the CLI's evaluator
            os.environ["GUARDRAIL_THREADS"] = str(threads)
        self.check: RowCheck | None = None
        self.error: GuardrailError | None = None
        try:
            self.check = make_check()
        except GuardrailError as exc:
            self.error = exc

    def run(self, record: Record) -> RowResult:
        """One row's result; an error of ours is raised (again, for every later row)."""
        if self.error is not None:
            raise self.error
        assert self.check is not None
        try:
            return self.check(record)
        except GuardrailError as exc:  # an InputError of the row is a result already (unchecked); this is not
            self.error = exc
            raise


def _portable(exc: GuardrailError) -> bytes:
    """``exc`` pickled for the driver, or its message as a ConfigurationError when it does not pickle."""
    try:
        blob = pickle.dumps(exc)
        pickle.loads(blob)
        return blob
    except Exception:  # any pickling failure
        return pickle.dumps(ConfigurationError(str(exc)))


class _RecordActor(CheckActor):
    """``guardrail check --ray``: pickled records in; pickled row results (or the error of ours that stopped them)
    and the model's threshold out."""

    def __call__(self, batch: Any) -> Any:  # pyarrow.Table in and out
        pa = pyarrow()
        results = []
        for blob in batch.column("record").to_pylist():
            try:
                results.append(pickle.dumps(self.run(pickle.loads(blob))))
            except GuardrailError as exc:
                results.append(_portable(exc))
        threshold = self.check.model_threshold if self.check is not None and self.error is None else None
        return pa.table({
            "index": batch.column("index"),
            "result": pa.array(results, type=pa.binary()),
            "threshold": pa.array([threshold] * len(results), type=pa.float64()),
        })


def check_records(records: Sequence[Record], make_check: Callable[[], RowCheck], *, actors: int | None = None,
                  batch_size: int = BATCH_SIZE, threads: int | None = 1) -> Iterator[tuple[RowResult, float | None]]:
    """Check ``records`` on Ray Data (Ray must be initialized: :func:`ray_session`): each result with the model's
    threshold (None before the model ran), in the order of ``records``, as they come.

    ``make_check`` (picklable: it runs in each actor) builds the row checker; ``actors`` sizes the pool (default:
    one per CPU of the cluster); ``threads`` is each actor's ``GUARDRAIL_THREADS`` (one per actor's CPU; None: the
    actor's environment decides)."""
    rt = import_ray()
    if not records:
        return
    items = [{"index": i, "record": pickle.dumps(rec)} for i, rec in enumerate(records)]
    blocks = max(1, min(math.ceil(len(items) / batch_size), 1000))
    ds: ray.data.Dataset = rt.data.from_items(items, override_num_blocks=blocks)
    ds = ds.map_batches(_RecordActor, fn_constructor_args=(make_check, threads), batch_size=batch_size,
                        batch_format="pyarrow", compute=actor_pool(actors), num_cpus=1,
                        udf_modifying_row_count=False)
    ds.context.execution_options.preserve_order = True  # rows stream out in input order (the buffer below: a guard)
    pending: dict[int, tuple[RowResult, float | None]] = {}
    following = 0
    batches: Iterable[Any] = ds.iter_batches(batch_size=None, batch_format="pyarrow")
    for batch in batches:
        for index, blob, threshold in zip(batch.column("index").to_pylist(), batch.column("result").to_pylist(),
                                          batch.column("threshold").to_pylist()):
            result = pickle.loads(blob)
            if isinstance(result, GuardrailError):  # exit 2 with its message, as without Ray
                raise result
            pending[index] = (result, threshold)
        while following in pending:
            yield pending.pop(following)
            following += 1
    if following != len(records):
        raise RuntimeError(f"Ray Data returned {following} of {len(records)} rows")
