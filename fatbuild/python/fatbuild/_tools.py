"""Where the fatbuild and archprobe programs are, and running them."""
import os
import shutil
import subprocess
import sys
import sysconfig

_HERE = os.path.dirname(os.path.abspath(__file__))


class FatbuildError(RuntimeError):
    """A fatbuild or archprobe run failed; the message carries what the tool said."""


def _bundled(name):
    path = os.path.join(_HERE, "_bundle", "bin", name)
    return path if os.access(path, os.X_OK) else None


def find_executable(name="fatbuild"):
    """The program `name` ("fatbuild" or "archprobe"): $FATBUILD_EXECUTABLE / $ARCHPROBE_EXECUTABLE,
    else the copy this package carries (a wheel built from the repository's pyproject.toml), else
    on PATH. archprobe is also looked for beside the fatbuild that was named. The carried copy
    comes before PATH: it is the one this package was built with, and PATH's may be the console
    script that only execs it."""
    env = os.environ.get(name.upper() + "_EXECUTABLE")
    if env:
        if not os.access(env, os.X_OK):
            raise FatbuildError(f"{name.upper()}_EXECUTABLE={env} is not an executable file")
        return env
    if name == "archprobe" and os.environ.get("FATBUILD_EXECUTABLE"):
        beside = os.path.join(os.path.dirname(os.environ["FATBUILD_EXECUTABLE"]), "archprobe")
        if os.access(beside, os.X_OK):
            return beside
    found = _bundled(name) or shutil.which(name)
    if not found:
        raise FatbuildError(
            f"cannot find the {name} program: pip install the fatbuild wheel that carries it "
            f"(pip install <repository>), set {name.upper()}_EXECUTABLE, or put it on PATH "
            f"(cmake --install ... --prefix P; PATH=P/bin:$PATH)")
    return found


def ninja_path():
    """The ninja fatbuild runs: $FATBUILD_NINJA, else ninja on PATH, else the one pip put into
    this Python's scripts directory (the wheel's dependency); None when there is none."""
    env = os.environ.get("FATBUILD_NINJA")
    if env:
        return env if os.access(env, os.X_OK) else None
    found = shutil.which("ninja")
    if found:
        return found
    ninja = os.path.join(sysconfig.get_path("scripts"), "ninja")
    return ninja if os.access(ninja, os.X_OK) else None


def _tool_env(extra=None):
    """The environment for a tool run: unchanged, except that a ninja installed into this
    Python's scripts directory (the wheel's dependency) is named by FATBUILD_NINJA when PATH has
    none, as it does when the venv's python runs without the venv being activated; and extra."""
    env = None
    if not os.environ.get("FATBUILD_NINJA") and not shutil.which("ninja"):
        ninja = ninja_path()
        if ninja:
            env = dict(os.environ, FATBUILD_NINJA=ninja)
    if extra:
        env = dict(env or os.environ, **extra)
    return env


def run(name, args, verbose=False, check=True):
    """Runs the tool with args; returns (returncode, stdout, stderr). With check, a failure
    raises FatbuildError with the tool's stderr."""
    exe = find_executable(name)
    cmd = [exe] + list(args)
    if verbose:
        print("fatbuild.py: " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_tool_env())
    if check and proc.returncode != 0:
        raise FatbuildError(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc.returncode, proc.stdout, proc.stderr


def run_streamed(name, args, stream=False, env=None):
    """Runs the tool with args, its stdout and stderr as one stream: with stream, each line goes
    to sys.stdout as it comes (a build's progress, as torch's BuildExtension shows ninja's);
    returns (returncode, all the output)."""
    exe = find_executable(name)
    proc = subprocess.Popen([exe] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=_tool_env(env), text=True, errors="replace", bufsize=1)
    out = []
    for line in proc.stdout:
        out.append(line)
        if stream:
            sys.stdout.write(line)
            sys.stdout.flush()
    proc.stdout.close()
    return proc.wait(), "".join(out)


def write_text_atomic(path, text):
    """Writes text to path through a temporary beside it and a rename: a reader sees the old
    content or the new, never a part (two processes may build in one dir)."""
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _exec_bundled(name):
    path = _bundled(name)
    if not path:
        sys.exit(f"{name}: this fatbuild package carries no {name} program ({os.path.join(_HERE, '_bundle', 'bin')}); "
                 f"reinstall it from the repository (pip install <repository>)")
    # argv[0] as invoked: archprobe picks its output format by the name it runs under.
    os.execv(path, [sys.argv[0]] + sys.argv[1:])


def fatbuild_main():
    """The `fatbuild` console script of the wheel: becomes the carried fatbuild program."""
    _exec_bundled("fatbuild")


def archprobe_main():
    """The `archprobe` console script of the wheel: becomes the carried archprobe program."""
    _exec_bundled("archprobe")
