"""``python -m guardrail.cli``: the ``guardrail`` command."""

import sys

from guardrail.cli.main import main

sys.exit(main())
