"""Read and validate iocpbench results files.

Every way a file can be unusable (missing, unreadable, truncated, not JSON, a newer
schema_version, missing fixed names) becomes one InputError with a one-line message; the
console scripts print it and exit 2. Past this module the rest of the package may index the
fixed names directly, because the schema guarantees them.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
RESULTS_SCHEMA = "results.schema.json"
PROBE_SCHEMA = "probe.schema.json"


class InputError(Exception):
    """A results file (or an argument) the tools cannot use. The message is one line."""


@dataclass(frozen=True)
class Results:
    """One loaded results file: its path (for messages and labels) and its parsed data."""

    path: Path
    data: dict[str, Any]

    @property
    def machine(self) -> dict[str, Any]:
        return self.data["machine"]

    @property
    def points(self) -> list[dict[str, Any]]:
        return self.data["points"]


def schema_dirs() -> list[Path]:
    """Where the schemas may live: the repository (editable install, the normal case), then
    the data-files copy a regular install puts under <prefix>/share."""
    return [
        Path(__file__).resolve().parent.parent / "results" / "schema",
        Path(sys.prefix) / "share" / "iocpbench" / "schema",
    ]


def load_schema(name: str) -> dict[str, Any]:
    for directory in schema_dirs():
        candidate = directory / name
        if candidate.is_file():
            with candidate.open(encoding="utf-8") as f:
                schema: dict[str, Any] = json.load(f)
            return schema
    looked = ", ".join(str(d) for d in schema_dirs())
    raise InputError(f"schema {name} not found (looked in {looked})")


def _validator() -> Any:
    # Imported here so that `--help` stays fast and a broken jsonschema only hurts loading.
    import jsonschema

    results = load_schema(RESULTS_SCHEMA)
    probe = load_schema(PROBE_SCHEMA)
    # The results schema refers to probe.schema.json by a relative $ref; put both in a local
    # store under their $id so resolution never touches the network.
    cls = jsonschema.validators.validator_for(results)
    registry = _registry(results, probe)
    if registry is not None:
        return cls(results, registry=registry)
    # Debian 12's jsonschema (4.10) predates `referencing`: its RefResolver is the only way
    # there (deprecated since 4.18, so never reached on a current install).
    resolver = jsonschema.RefResolver.from_schema(results, store={results["$id"]: results, probe["$id"]: probe})
    return cls(results, resolver=resolver)


def _registry(*schemas: dict[str, Any]) -> Any:
    """A `referencing` registry holding the schemas under their $id, or None where the
    package is not installed (jsonschema < 4.18)."""
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012
    except ImportError:
        return None
    resources = [(s["$id"], Resource.from_contents(s, default_specification=DRAFT202012)) for s in schemas]
    return Registry().with_resources(resources)


def _json_error_message(path: Path, text: str, err: json.JSONDecodeError) -> str:
    # A file cut short (an interrupted writer, a partial artifact download) fails at its very
    # end; say "truncated" then, because that is what the user has to go and fix.
    if not text.strip():
        return f"{path}: empty file, not a results file"
    if err.pos >= len(text.rstrip()):
        return f"{path}: truncated JSON (ends at line {err.lineno} column {err.colno})"
    return f"{path}: corrupt JSON at line {err.lineno} column {err.colno}: {err.msg}"


def parse_text(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(_json_error_message(path, text, err)) from None
    except RecursionError:
        raise InputError(f"{path}: corrupt JSON (nested too deeply)") from None


def check_version(path: Path, data: Any) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a results file (top level is {type(data).__name__}, expected an object)")
    if "schema_version" not in data:
        raise InputError(f"{path}: not a results file (no schema_version)")
    version = data["schema_version"]
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise InputError(f"{path}: newer schema_version {version}; this tool reads {SCHEMA_VERSION}")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise InputError(f"{path}: unsupported schema_version {version!r}; this tool reads {SCHEMA_VERSION}")


def _location(parts: Any) -> str:
    return "/".join(str(p) for p in parts) or "(top level)"


def check_schema(path: Path, data: dict[str, Any]) -> None:
    import jsonschema.exceptions

    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        # jsonschema messages may embed the whole offending value; keep the line readable.
        message = " ".join(error.message.split())
        if len(message) > 200:
            message = message[:197] + "..."
        raise InputError(f"{path}: invalid results at {_location(error.absolute_path)}: {message}")


def load_results(path: str | Path) -> Results:
    """Read, parse and validate one results file, or raise InputError."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, expected a results JSON file") from None
    except OSError as err:
        raise InputError(f"{p}: cannot read: {err.strerror or err}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{p}: corrupt file (not UTF-8 at byte {err.start})") from None
    data = parse_text(p, text)
    check_version(p, data)
    check_schema(p, data)
    return Results(path=p, data=data)


def load_all(paths: list[str] | list[Path]) -> list[Results]:
    return [load_results(p) for p in paths]
