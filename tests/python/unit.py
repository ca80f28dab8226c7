"""unit.py: the fatbuild Python package without torch, in seconds (python3 -m unittest).

What the package does on its own, with the real fatbuild and archprobe programs
($FATBUILD_BIN, $ARCHPROBE_BIN) and a Python that has no torch: the import leaves torch alone,
the arch helpers answer what the CLI answers, torch's rules (the project's own arches, the JIT
versions, SYCL refused) hold, the program lookup fails with a message a user can act on, and
torch-only calls say that torch is missing. The end-to-end builds with torch are torch_api and
torch_extension."""
import importlib
import os
import subprocess
import sys
import tempfile
import unittest

FB = os.environ["FATBUILD_BIN"]
AP = os.environ["ARCHPROBE_BIN"]


class _NoTorch:
    """A Python without torch, even where one is installed: its import fails here."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch' (hidden by tests/python/unit.py)", name="torch")
        return None


sys.meta_path.insert(0, _NoTorch())


def cli(*args):
    return subprocess.run([FB] + list(args), check=True, capture_output=True, text=True).stdout


class Package(unittest.TestCase):
    def setUp(self):
        self.env = dict(os.environ)
        os.environ["FATBUILD_EXECUTABLE"] = FB
        os.environ.pop("ARCHPROBE_EXECUTABLE", None)
        os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        for m in [m for m in sys.modules if m == "fatbuild" or m.startswith("fatbuild.")]:
            del sys.modules[m]
        self.fb = importlib.import_module("fatbuild")
        self.torch = importlib.import_module("fatbuild._torch")

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)

    def test_no_torch_here(self):
        # the premise of this file (_NoTorch), or the checks below prove nothing
        with self.assertRaises(ImportError):
            importlib.import_module("torch")
        self.assertNotIn("torch", sys.modules)

    def test_arch_flags_are_the_cli_s(self):
        for lst in ("8.0 9.0+PTX", "7.5;8.6", "9.0a", "Ampere"):
            self.assertEqual(self.fb.arch_flags(lst), cli("flags", "--format", "nvcc", "--arch-list", lst).split())
            self.assertEqual(self.fb.arch_flags(lst, fmt="cmake"),
                             cli("flags", "--format", "cmake", "--arch-list", lst).strip())
        # torch's own spelling of the list (its _get_cuda_arch_flags)
        self.assertEqual(self.fb.arch_flags("8.0 9.0+PTX"),
                         ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
                          "-gencode=arch=compute_90,code=compute_90"])
        self.assertNotIn("torch", sys.modules)

    def test_bad_arch_is_a_fatbuild_error(self):
        with self.assertRaises(self.fb.FatbuildError) as e:
            self.fb.arch_flags("3.5")
        self.assertIn("3.5", str(e.exception))

    def test_arch_list_env_first(self):
        os.environ["TORCH_CUDA_ARCH_LIST"] = "8.6+PTX"
        self.assertEqual(self.fb.arch_list(), "8.6+PTX")

    def test_arch_list_fallback_names_why(self):
        # no GPU to ask (the driver library named does not exist): the fallback, and a notice
        os.environ["ARCHPROBE_LIBCUDA"] = "/nonexistent/libcuda.so.1"
        got = subprocess.run([sys.executable, "-c", "import fatbuild; print(fatbuild.arch_list(fallback='8.0'))"],
                             capture_output=True, text=True, env=os.environ)
        self.assertEqual(got.returncode, 0, got.stderr)
        self.assertEqual(got.stdout.strip(), "8.0")
        self.assertNotEqual(got.stderr.strip(), "", "the fallback was taken without a word")

    def test_project_arches_win(self):
        # torch's rule: a word holding "arch" (not the name define) means the project names them
        names = self.torch.names_archs
        self.assertTrue(names(["-O3", "-gencode", "arch=compute_80,code=sm_80"]))
        self.assertTrue(names(["-arch=sm_90"]))
        self.assertTrue(names(["--gpu-architecture=sm_86"]))
        self.assertFalse(names(["-O3", "--use_fast_math", "-DTORCH_EXTENSION_NAME=my_arch_ext"]))
        self.assertFalse(names(None))

    def test_versions_as_torch(self):
        v = self.torch.Versioner()
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "k.cu")
            with open(src, "w") as f:
                f.write("__global__ void k() {}\n")
            self.assertEqual(v.bump("ext", [src], ["-O2"]), 0)
            self.assertEqual(v.bump("ext", [src], ["-O2"]), 0)
            self.assertEqual(v.bump("ext", [src], ["-O3"]), 1)
            with open(src, "a") as f:
                f.write("// changed\n")
            self.assertEqual(v.bump("ext", [src], ["-O3"]), 2)
            self.assertEqual(v.bump("other", [src], ["-O3"]), 0)

    def test_sycl_refused_before_torch(self):
        with self.assertRaises(OSError) as e:
            self.fb.load("s", ["k.sycl"])
        self.assertIn("SYCL", str(e.exception))
        with self.assertRaises(OSError):
            self.fb.load("s", ["k.cpp"], with_sycl=True)

    def test_load_without_torch_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(ImportError) as e:
                self.fb.load("m", [os.path.join(d, "m.cpp")], build_directory=d)
            self.assertIn("torch", str(e.exception))

    def test_program_lookup(self):
        os.environ["FATBUILD_EXECUTABLE"] = "/nonexistent/fatbuild"
        with self.assertRaises(self.fb.FatbuildError) as e:
            self.fb.arch_flags("8.0")
        self.assertIn("FATBUILD_EXECUTABLE=/nonexistent/fatbuild", str(e.exception))
        # archprobe is found beside the fatbuild that was named
        os.environ["FATBUILD_EXECUTABLE"] = FB
        tools = importlib.import_module("fatbuild._tools")
        if os.path.dirname(AP) == os.path.dirname(FB):
            self.assertEqual(tools.find_executable("archprobe"), AP)

    def test_build_root(self):
        os.environ.pop("FATBUILD_BUILD_DIR", None)
        os.environ["TORCH_EXTENSIONS_DIR"] = "/x/ext"
        self.assertEqual(self.torch.default_build_root(), "/x/ext/fatbuild")
        os.environ["FATBUILD_BUILD_DIR"] = "/y"
        self.assertEqual(self.torch.default_build_root(), "/y")

    def test_words_one_flag_each(self):
        with self.assertRaises(ValueError):
            self.fb.build("x", ["k.cu"], "x.so", extra_cflags=["-O2 -g"])

    def test_is_standalone_and_module_exclusive(self):
        with self.assertRaises(ValueError):
            self.fb.load("m", ["m.cpp"], is_python_module=True, is_standalone=True)

    def test_write_text_atomic(self):
        tools = importlib.import_module("fatbuild._tools")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f")
            tools.write_text_atomic(path, "one\n")
            tools.write_text_atomic(path, "two\n")
            with open(path) as f:
                self.assertEqual(f.read(), "two\n")
            self.assertEqual(os.listdir(d), ["f"])
            with self.assertRaises(OSError):  # a directory in the way: nothing left behind
                tools.write_text_atomic(os.path.join(d, "no", "f"), "x")
            self.assertEqual(os.listdir(d), ["f"])

    def test_failure_said_once(self):
        """A failed build's error appears once: streamed (setup.py, load(verbose=True)) it was
        shown as it came, so the exception is torch's bare words, and setup.py's route prints no
        command line first; kept (load(verbose=False)) the exception carries it from the failed
        edge on."""
        import contextlib
        import io
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "fatbuild")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\necho "[1/2] c++ -c k.cpp"\necho "FAILED: k.o"\n'
                        'echo "k.cpp:1:1: error: boom"\nexit 1\n')
            os.chmod(fake, 0o755)
            os.environ["FATBUILD_EXECUTABLE"] = fake
            k = os.path.join(d, "k.cpp")
            open(k, "w").close()
            for stream in (True, False):
                out = io.StringIO()
                with contextlib.redirect_stdout(out), self.assertRaises(self.fb.FatbuildError) as e:
                    self.fb._torch_build("k", [k], os.path.join(d, "k.so"), os.path.join(d, "b%d" % stream),
                                         ["-O2"], None, [], False, verbose=True, stream=stream,
                                         error_prefix="Error compiling objects for extension")
                shown = out.getvalue() + str(e.exception)
                self.assertEqual(shown.count("error: boom"), 1, shown)
                self.assertNotIn("fatbuild.py:", shown)
                if stream:
                    self.assertEqual(str(e.exception), "Error compiling objects for extension")
                else:
                    self.assertTrue(str(e.exception).startswith("Error compiling objects for extension: FAILED: k.o"))


class TorchQuery(unittest.TestCase):
    """The torch query has one copy: the text fatbuild runs with `python -c` is
    _torch_query.py's, and its answer() gives the keys torch.c reads."""

    def test_cli_runs_this_file(self):
        src = os.path.join(os.environ.get("FB_SOURCE_DIR", ""), "fatbuild", "python", "fatbuild", "_torch_query.py")
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "python")
            with open(fake, "w") as f:  # keeps what it was asked to run, then has no torch
                f.write('#!/bin/sh\nprintf "%%s" "$2" >"%s/asked"\n'
                        'echo "fbtq error=ModuleNotFoundError: no torch here"\nexit 3\n' % d)
            os.chmod(fake, 0o755)
            k = os.path.join(d, "k.cpp")
            open(k, "w").close()
            p = subprocess.run([FB, "build", "--torch", "--python", fake, "--name", "k", "--build-dir",
                                os.path.join(d, "b"), "-o", os.path.join(d, "k.so"), k],
                               capture_output=True, text=True)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no torch here", p.stderr)
            with open(os.path.join(d, "asked")) as a, open(src) as b:
                self.assertEqual(a.read(), b.read())

    def test_answer(self):
        import types
        q = importlib.import_module("fatbuild._torch_query")
        with tempfile.TemporaryDirectory() as d:
            for f, text in (("__init__.py", "x = 1\n"), ("version.py", "v = 2\n"),
                            ("cpp_extension.py", "a = '-std=c++17'\nb = '-std=c++20'\n")):
                with open(os.path.join(d, f), "w") as out:
                    out.write(text)
            torch = types.SimpleNamespace(__version__="9.9", __file__=os.path.join(d, "__init__.py"),
                                          version=types.SimpleNamespace(cuda=None),
                                          _C=types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True))
            ce = types.SimpleNamespace(__file__=os.path.join(d, "cpp_extension.py"),
                                       include_paths=lambda: ["/t/include", "/t/include/api"])
            lines = q.answer(torch, ce)
        keys = [l.split("=", 1)[0] for l in lines]
        self.assertEqual(keys, ["fbtq version", "fbtq cuda", "fbtq abi", "fbtq include", "fbtq include",
                                "fbtq libdir", "fbtq pyinclude", "fbtq extsuffix", "fbtq std", "fbtq stamp",
                                "fbtq stamp"])
        self.assertIn("fbtq version=9.9", lines)
        self.assertIn("fbtq cuda=", lines)
        self.assertIn("fbtq abi=1", lines)
        self.assertIn("fbtq std=c++20", lines)
        self.assertIn("fbtq libdir=%s/lib" % d, lines)


if __name__ == "__main__":
    unittest.main()
