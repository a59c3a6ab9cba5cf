#!/usr/bin/env python3
"""The peer benchmark, now `python -m autotune_dispatch.peers` (python/
autotune_dispatch/peers.py); this runs it from the checkout without
PYTHONPATH, with the same arguments (see --help)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from autotune_dispatch.peers import main  # noqa: E402

sys.exit(main())
