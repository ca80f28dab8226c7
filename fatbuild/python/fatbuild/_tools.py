"""Where the fatbuild and archprobe programs are, and running them."""
import os
import shutil
import subprocess

_HERE = os.path.dirname(os.path.abspath(__file__))


class FatbuildError(RuntimeError):
    """A fatbuild or archprobe run failed; the message carries what the tool said."""


def _bundled(name):
    path = os.path.join(_HERE, "_bundle", "bin", name)
    return path if os.access(path, os.X_OK) else None


def find_executable(name="fatbuild"):
    """The program `name` ("fatbuild" or "archprobe"): $FATBUILD_EXECUTABLE / $ARCHPROBE_EXECUTABLE,
    else on PATH, else the copy this package carries. archprobe is also looked for beside the
    fatbuild that was found."""
    env = os.environ.get(name.upper() + "_EXECUTABLE")
    if env:
        if not os.access(env, os.X_OK):
            raise FatbuildError(f"{name.upper()}_EXECUTABLE={env} is not an executable file")
        return env
    if name == "archprobe" and os.environ.get("FATBUILD_EXECUTABLE"):
        beside = os.path.join(os.path.dirname(os.environ["FATBUILD_EXECUTABLE"]), "archprobe")
        if os.access(beside, os.X_OK):
            return beside
    found = shutil.which(name) or _bundled(name)
    if not found:
        raise FatbuildError(
            f"cannot find the {name} program: set {name.upper()}_EXECUTABLE, put it on PATH "
            f"(cmake --install ... --prefix P; PATH=P/bin:$PATH), or install a wheel that carries it")
    return found


def run(name, args, verbose=False, check=True):
    """Runs the tool with args; returns (returncode, stdout, stderr). With check, a failure
    raises FatbuildError with the tool's stderr."""
    exe = find_executable(name)
    cmd = [exe] + list(args)
    if verbose:
        print("fatbuild.py: " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and proc.returncode != 0:
        raise FatbuildError(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc.returncode, proc.stdout, proc.stderr
