"""A user's model, as `dlbench run --model` names it: PATH.py:NAME (NAME builds and returns a
Keras 3 model or a PyTorch nn.Module) or PATH.keras (a saved Keras model), with the inputs it
is measured on. Everything here is checked without importing a framework, before anything is
written; dlbench.runner.worker.user_model.build_once then builds the model once in a process
of its own. Shared by both sides: the driver plans and prepares from it, the worker loads it."""

from __future__ import annotations

import ast
import hashlib
import math
import re
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from dlbench.core.text.errors import UsageError

ACCEPTED = "PATH.py:NAME (NAME a function returning a Keras model or a torch.nn.Module) " \
           "or PATH.keras"
DTYPES = ("float32", "float16", "int32", "int64")
#: The largest sample --input-shape accepts, in elements.
MAX_SHAPE_ELEMENTS = 1 << 26
#: The experiments a model request plans (dlbench.core.declarations.experiments.REQUESTED_ONLY).
PARITY, INFERENCE, TRAINING = "model-parity", "model-inference", "model-training"
#: The saved weights every backend's worker loads, in the run's model folder.
KERAS_WEIGHTS = "model.weights.h5"
TORCH_WEIGHTS = "model.pt"


@dataclass(frozen=True)
class ModelRequest:
    """What `--model` and its input flags ask for, checked (paths absolute)."""

    path: str
    name: str  # "" for a .keras file
    #: one sample's shape; () when --data gives the inputs, or without either, the shape the
    #: (Keras) model declares
    input_shape: tuple[int, ...]
    input_dtype: str
    data_file: str
    batch_size: int  # throughput and training batch; 0: chosen so a call takes about 0.1 s

    @property
    def model_id(self) -> str:
        """The workload name of the model's cells: the file's stem and NAME, as a slug."""
        stem = Path(self.path).stem + (f"-{self.name}" if self.name else "")
        return "model-" + re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")

    def to_dict(self) -> dict:
        """The request as JSON-ready values (cells and model.json carry it)."""
        return asdict(self)


def parse_model(text: str) -> tuple[Path, str]:
    """(file, NAME) of a --model value; UsageError naming what is accepted."""
    path_text, sep, name = ("", "", "") if text.endswith(".keras") else text.rpartition(":")
    if not sep:
        path_text, name = text, ""
    path = Path(path_text).expanduser()
    if path.suffix not in (".py", ".keras"):
        raise UsageError(f"--model {text!r}: expected {ACCEPTED}")
    if not path.is_file():
        raise UsageError(f"--model {text!r}: no such file {str(path)!r}; expected {ACCEPTED}")
    if path.suffix == ".keras":
        if name:
            raise UsageError(f"--model {text!r}: a .keras file takes no :NAME; expected "
                             f"{ACCEPTED}")
        check_keras_archive(path, text)
        return path.resolve(), ""
    if not name:
        raise UsageError(f"--model {text!r}: name the function that builds the model, "
                         f"e.g. {path}:build; expected {ACCEPTED}")
    if not name.isidentifier():
        raise UsageError(f"--model {text!r}: {name!r} is not a Python name; expected {ACCEPTED}")
    _check_defines(path, name, text)
    return path.resolve(), name


#: What a .keras file may expand to before Keras reads it: its config and metadata are
#: kilobytes (a 600 MB config.json took 300 s and 2.1 GB per worker), its weights gigabytes.
MAX_KERAS_CONFIG_BYTES = 16 << 20
MAX_KERAS_BYTES = 8 << 30
MAX_KERAS_MEMBERS = 10_000


def check_keras_archive(path: Path, text: str) -> None:
    """UsageError for a .keras file that is not a zip archive, or whose members declare more
    than a saved model holds (read from its directory, nothing expanded)."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise UsageError(f"--model {text!r}: not a .keras archive ({error}); expected a model "
                         "saved with model.save('NAME.keras')") from None
    if len(members) > MAX_KERAS_MEMBERS:
        raise UsageError(f"--model {text!r}: {len(members)} members, more than a saved model "
                         f"holds (at most {MAX_KERAS_MEMBERS})")
    for member in members:
        if member.filename.endswith(".json") and member.file_size > MAX_KERAS_CONFIG_BYTES:
            raise UsageError(f"--model {text!r}: its {member.filename[:100]!r} expands to "
                             f"{member.file_size} bytes, over the limit of "
                             f"{MAX_KERAS_CONFIG_BYTES} for a model's configuration")
    total = sum(member.file_size for member in members)
    if total > MAX_KERAS_BYTES:
        raise UsageError(f"--model {text!r}: expands to {total} bytes, over the limit of "
                         f"{MAX_KERAS_BYTES} for a saved model")


def _check_defines(path: Path, name: str, text: str) -> None:
    """NAME must be defined at the top level of the file (read, not run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as error:
        raise UsageError(f"--model {text!r}: {path} is not readable Python "
                         f"({type(error).__name__}: {error}); expected {ACCEPTED}") from None
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    if name not in defined:
        functions = sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef))
        raise UsageError(f"--model {text!r}: {path.name} defines no {name!r}; its functions: "
                         f"{', '.join(functions) or 'none'}")


def parse_shape(text: str) -> tuple[int, ...]:
    """One sample's shape from '28,28,1'; UsageError otherwise."""
    parts = [p.strip() for p in text.strip().strip("()[]").split(",") if p.strip()]
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        shape = ()
    if not shape or any(d < 1 for d in shape):
        raise UsageError(f"--input-shape {text!r}: expected one sample's shape as positive "
                         "integers, e.g. 28,28,1 (the batch dimension left out)")
    elements = 1
    for d in shape:
        elements *= d
    if elements > MAX_SHAPE_ELEMENTS:
        raise UsageError(f"--input-shape {text!r}: {elements} elements per sample; at most "
                         f"{MAX_SHAPE_ELEMENTS} are accepted")
    return shape


def model_request(model: str, input_shape: str, input_dtype: str, data_file: str,
                  batch_size: int | None) -> ModelRequest:
    """The checked request, or a UsageError naming the first bad value."""
    path, name = parse_model(model)
    if input_dtype not in DTYPES:
        raise UsageError(f"--input-dtype {input_dtype!r}: expected one of {', '.join(DTYPES)}")
    if batch_size is not None and batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, got {batch_size}")
    if input_shape and data_file:
        raise UsageError("--input-shape and --data both give the model's inputs: give "
                         "--input-shape SHAPE (generated data) or --data FILE.npz, one of them")
    shape: tuple[int, ...] = ()
    data = ""
    if input_shape:
        shape = parse_shape(input_shape)
    elif data_file:
        data = str(_check_data(Path(data_file).expanduser()))
    return ModelRequest(str(path), name, shape, input_dtype, data, batch_size or 0)


def _check_data(path: Path) -> Path:
    """A .npz holding arrays x (and y for training) with a batch dimension; checked unpickled."""
    if path.suffix != ".npz" or not path.is_file():
        raise UsageError(f"--data {str(path)!r}: expected an existing .npz file with arrays "
                         "x (inputs, batch first) and y (targets)")
    try:
        shapes = npz_shapes(path)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise UsageError(f"--data {str(path)!r}: not a readable .npz ({error}); expected arrays "
                         "x and y") from None
    keys = set(shapes)
    x = shapes.get("x")
    rows = None if x is None else (x[0] if x else 0)
    y_rows = shapes["y"][0] if shapes.get("y") else None
    if x is None or not rows:
        raise UsageError(f"--data {str(path)!r}: no array x with at least one sample; keys "
                         f"found: {', '.join(sorted(keys)) or 'none'}")
    if y_rows is not None and y_rows != rows:
        raise UsageError(f"--data {str(path)!r}: x has {rows} samples but y has {y_rows}")
    return path.resolve()


#: The most a --data file may hold unpacked: its arrays are read whole by every process.
MAX_DATA_BYTES = 1 << 30


def npz_shapes(path: Path) -> dict[str, tuple[int, ...]]:
    """Each array's shape in the .npz at `path`, from the headers alone; ValueError when its
    arrays declare more than MAX_DATA_BYTES unpacked (a small file can unpack to gigabytes),
    or a header declares more bytes than its member holds (loading allocates the header's
    shape: 32 GiB from a 2 kB file)."""
    import numpy as np

    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        unpacked = sum(member.file_size for member in members)
        if unpacked > MAX_DATA_BYTES:
            raise ValueError(f"its arrays unpack to {unpacked} bytes, over the limit of "
                             f"{MAX_DATA_BYTES}")
        shapes = {}
        for member in members:
            with archive.open(member) as stream:
                version = np.lib.format.read_magic(stream)
                read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                        else np.lib.format.read_array_header_2_0)
                shape, _, dtype = read(stream)
                declared, held = math.prod(shape) * dtype.itemsize, member.file_size - stream.tell()
            if dtype.hasobject:
                raise ValueError(f"array {member.filename} holds Python objects")
            if declared > held:
                raise ValueError(f"array {member.filename} declares {declared} bytes but holds "
                                 f"{held}; expected arrays whose headers match their data (as "
                                 "numpy.savez writes them)")
            shapes[member.filename.removesuffix(".npy")] = shape
    return shapes


def model_digest(path: str | Path) -> str:
    """sha256 of the model's file (PATH.py or PATH.keras): a resumed run measures the same
    model only if the file is unchanged (modules the file imports are not covered)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
