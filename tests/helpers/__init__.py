"""What the test modules (and the benchmarks) share, in one place: specs (`specs`), the app
in process (`client`), a real server on loopback and its measurements (`server`), the load
driver (`load`), the browser session and page helpers (`browser`), optional tools and long
runs (`env`), and PyTorch's version of the model (`torch_reference`). Fixtures stay in the
conftest.py files; nothing here imports from benchmarks/."""
