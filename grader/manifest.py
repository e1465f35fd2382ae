"""The build's own list of what it made: <build>/labs-manifest.json (docs/architecture.md).

Binaries and objects are found here and nowhere else: globbing the build tree would take any
file with the right name, including one a submission managed to leave there."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from grader.errors import EXIT_INTERNAL, GraderError

MANIFEST_NAME = "labs-manifest.json"
VERSION = 1

_NOT_OURS = ("is this build directory configured by this repository's CMakeLists?")


@dataclasses.dataclass(frozen=True)
class Target:
    target: str      # the CMake target that builds it
    path: Path       # the file it builds


@dataclasses.dataclass(frozen=True)
class LabPaths:
    name: str
    student_target: str
    student_sources: tuple    # Path, the staged files the student object is compiled from
    student_objects: tuple    # Path, what the policy check reads
    interface_headers: tuple  # Path, the lab's header(s): what the student code may define
    worker: Target
    test: Target
    bench: Target
    # A worker linked with what the lab gives some variants only (add_cuda_lab's
    # HELPER_VARIANTS: lab 07's cuBLAS GEMM for v1_im2col), and those variants: the judges run
    # their calls in it, every other variant's in `worker`, which lacks the helper. None: one
    # worker runs every variant.
    helper_worker: Target | None = None
    helper_variants: tuple = ()   # str
    # The command prefix that runs a compiler on the student's files in the build sandbox
    # (grader/buildbox.py; CMake's LABS_SANDBOX_BUILD); () when the build was configured
    # without it. The policy's preprocessor runs on those files go through it too.
    build_sandbox: tuple = ()     # str

    @property
    def workers(self) -> tuple:
        """Every worker of the lab (Target): each links the student's object, so each is
        built, checked for executable memory, hashed and verified before every run."""
        return (self.worker,) + ((self.helper_worker,) if self.helper_worker else ())

    @property
    def worker_routes(self) -> dict:
        """variant -> the worker binary (Path) that runs it, for the variants that do not run
        in `worker` (the judges' --labkit-worker-for)."""
        if self.helper_worker is None:
            return {}
        return {v: self.helper_worker.path for v in self.helper_variants}


@dataclasses.dataclass(frozen=True)
class Manifest:
    path: Path
    gpu_info: Path
    compile_commands: Path | None
    labs: dict    # lab name -> LabPaths

    def lab(self, name: str) -> LabPaths:
        if name not in self.labs:
            raise GraderError(f"{self.path} describes no lab '{name}' (labs: "
                              f"{', '.join(sorted(self.labs)) or 'none'}): was the build "
                              f"configured with this lab in LABS_ONLY?", EXIT_INTERNAL)
        return self.labs[name]


def _fail(path: Path, what: str) -> GraderError:
    return GraderError(f"{path}: {what}; {_NOT_OURS}", EXIT_INTERNAL)


def _abs_path(value, path: Path, where: str) -> Path:
    if not isinstance(value, str) or not value or "\0" in value or not Path(value).is_absolute():
        raise _fail(path, f"{where} must be an absolute path, got {value!r}")
    return Path(value)


def _paths(value, path: Path, where: str) -> tuple:
    if not isinstance(value, list):
        raise _fail(path, f"{where} must be a list of paths, got {value!r}")
    return tuple(_abs_path(v, path, f"{where}[{i}]") for i, v in enumerate(value))


def _text(value, path: Path, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(path, f"{where} must be a non-empty string, got {value!r}")
    return value


def _target(value, path: Path, where: str) -> Target:
    if not isinstance(value, dict):
        raise _fail(path, f"{where} must be an object with 'target' and 'path', got {value!r}")
    return Target(_text(value.get("target"), path, f"{where}.target"),
                  _abs_path(value.get("path"), path, f"{where}.path"))


_VARIANT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _helper(value, path: Path, where: str) -> tuple:
    """(Target | None, variant names) of a lab's 'helper_worker' (absent or null: none)."""
    if value is None:
        return None, ()
    target = _target(value, path, where)
    variants = value.get("variants")
    if (not isinstance(variants, list) or not variants
            or not all(isinstance(v, str) and v and set(v) <= _VARIANT_CHARS for v in variants)):
        raise _fail(path, f"{where}.variants must be a non-empty list of variant names, got "
                          f"{variants!r}")
    return target, tuple(variants)


def _sandbox(value, path: Path, where: str) -> tuple:
    """A lab's 'build_sandbox': absent or null (no sandbox), or the launcher's argv prefix."""
    if value is None:
        return ()
    if (not isinstance(value, list) or not value
            or not all(isinstance(a, str) and a and "\0" not in a for a in value)):
        raise _fail(path, f"{where} must be null or a non-empty list of arguments, got {value!r}")
    return tuple(value)


def parse_manifest(data, path: Path) -> Manifest:
    if not isinstance(data, dict):
        raise _fail(path, "not a JSON object")
    if data.get("version") != VERSION:
        raise _fail(path, f"version {data.get('version')!r}, this grader reads version {VERSION}")
    compile_commands = data.get("compile_commands")
    labs = data.get("labs")
    if not isinstance(labs, dict):
        raise _fail(path, "'labs' must be an object")
    parsed = {}
    for name, lab in labs.items():
        w = f"labs.{name}"
        if not isinstance(lab, dict):
            raise _fail(path, f"{w} must be an object")
        objects = _paths(lab.get("student_objects"), path, f"{w}.student_objects")
        if not objects:
            raise _fail(path, f"{w}.student_objects is empty")
        helper, helped = _helper(lab.get("helper_worker"), path, f"{w}.helper_worker")
        parsed[name] = LabPaths(
            name=name,
            student_target=_text(lab.get("student_target"), path, f"{w}.student_target"),
            student_sources=_paths(lab.get("student_sources"), path, f"{w}.student_sources"),
            student_objects=objects,
            interface_headers=_paths(lab.get("interface_headers"), path,
                                     f"{w}.interface_headers"),
            worker=_target(lab.get("worker"), path, f"{w}.worker"),
            test=_target(lab.get("test"), path, f"{w}.test"),
            bench=_target(lab.get("bench"), path, f"{w}.bench"),
            helper_worker=helper, helper_variants=helped,
            build_sandbox=_sandbox(lab.get("build_sandbox"), path, f"{w}.build_sandbox"))
    return Manifest(path=path, gpu_info=_abs_path(data.get("gpu_info"), path, "gpu_info"),
                    compile_commands=(None if compile_commands is None else
                                      _abs_path(compile_commands, path, "compile_commands")),
                    labs=parsed)


def load_manifest(build_dir: Path) -> Manifest:
    path = build_dir / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GraderError(f"the build did not write {MANIFEST_NAME}: {_NOT_OURS} "
                          f"(looked for {path})", EXIT_INTERNAL) from None
    except (OSError, UnicodeDecodeError) as e:
        raise _fail(path, f"unreadable ({e})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise _fail(path, f"not valid JSON ({e})") from None
    return parse_manifest(data, path)
