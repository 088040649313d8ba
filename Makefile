# Set-up and everyday commands. Both `make run` and `make test` create or reuse .venv/
# and (re)build the Rust extension into it, so either works on a fresh clone.

VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.deps-installed

.PHONY: run test build venv bench clean

$(STAMP): pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2" "pytest>=7" "pandas>=2.0" "matplotlib>=3.7" "dask[distributed]"
	$(PIP) install -q "jinja2>=3.1" "tomli-w>=1.0" "jsonschema>=4.18" "tqdm>=4.64" "hypothesis>=6.80" "pytest-xdist>=3"
	touch $(STAMP)

venv: $(STAMP)

# Build the Rust core in release mode and install ecnlab (editable) into .venv.
# Also builds the emulated switch binary (`ecnlab-switch`) that `ecnlab emulate` runs, and
# its BPF congestion controls (target/bpf; skipped, with the missing tools named, without clang).
build: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	cargo build --release -q -p ecnlab-emu
	sh crates/ecnlab-emu/bpf/build.sh target/bpf || [ $$? -eq 3 ]  # BPF DCTCP for `ecnlab emulate`; 3: tools missing (named)

# The main job: the built-in default scenario (TCN static-flow experiment, TCN marking).
run: build
	$(VENV)/bin/ecnlab run --out out/default

# Every test: Rust unit/property/integration tests, then the Python and CLI tests, on every
# core (pytest-xdist), except those that measure real time (the emulator, the kernel:
# `realtime`), which then run alone. The 15 slowest of each part are named at the end: CI
# has a time budget.
test: build
	cargo test --workspace --exclude ecnlab-py -q
	$(VENV)/bin/python -m pytest -q --durations=15 -n auto -m "not realtime"
	$(VENV)/bin/python -m pytest -q --durations=15 -m realtime

clean:
	rm -rf $(VENV) target out
