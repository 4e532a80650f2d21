"""``python -m guardrail``: the ``guardrail`` command."""

import sys

from guardrail.cli import main

sys.exit(main())
