# torch.cmake: PyTorch extensions end to end (tests/torch/run.sh): a venv under the build dir
# with torch from PyPI (created once, then reused; pip's cache serves reinstalls), the muladd
# example built with `fatbuild build --torch`, fatbuild.load and a setup.py, each loaded into
# torch and its CPU op compared with PyTorch's. The first run downloads torch (a few GB).
# It runs beside the other tests (its builds use 2 jobs; memory is not the limit), and starts
# first (COST), being the longest.
add_test(NAME torch_extension COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/torch/run.sh)
set_tests_properties(torch_extension PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS torch TIMEOUT 2400
                     COST 300 RESOURCE_LOCK venv-torch)
# The Python layer against torch.utils.cpp_extension without compiling (tests/torch/api.sh): the
# API's signatures, load_inline's files, the compile commands word by word. The same venv.
add_test(NAME torch_api COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/torch/api.sh)
set_tests_properties(torch_api PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS torch TIMEOUT 1200
                     RESOURCE_LOCK venv-torch)
# python_unit: the Python package without torch (tests/python/unit.py, python3's unittest, seconds):
# the arch helpers against the CLI, torch's rules, clear errors.
add_test(NAME python_unit COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/python/unit.py -v)
set_tests_properties(python_unit PROPERTIES ENVIRONMENT "${FB_TEST_ENV};PYTHONPATH=${PROJECT_SOURCE_DIR}/fatbuild/python"
                     LABELS "torch;cli" TIMEOUT 120)
