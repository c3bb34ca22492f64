"""``manage.py llm_judge_template``: show the LLM judge's prompt template, or what it sends.

    python manage.py llm_judge_template [--template FILE] [--render] [--criterion overall]
        [--rubric FILE] [--original TEXT --candidate TEXT]

Without options: the default template (its version and hash first), to read or to copy
into a file and change. ``--template FILE`` checks a template of your own the way a run
would (unknown placeholders, a missing ``$original``/``$candidate``) and prints its hash.
``--render`` prints the chat messages the model would get for one item (an example pair
unless ``--original``/``--candidate`` are given) on ``--criterion`` of ``--rubric``
(a JSON file of criteria; PEM's by default). No model and no database are needed.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics.core.llm_judge.prompt import (
    DEFAULT_TEMPLATE,
    TEMPLATE_VERSION,
    render_messages,
    template_check,
    template_hash,
)
from metrics.core.llm_judge.rubric import rubric_from_json


class Command(BaseCommand):
    help = "Show the llm-judge prompt template (default or yours), or the messages it sends for one item."

    def add_arguments(self, parser):
        parser.add_argument("--template", type=Path, help="a template file of your own (checked, hashed)")
        parser.add_argument("--rubric", type=Path, help="a JSON file of criteria (default: PEM's four)")
        parser.add_argument("--criterion", default="overall")
        parser.add_argument("--render", action="store_true", help="print the messages for one item")
        parser.add_argument("--original", default="The committee approved the budget for next year.")
        parser.add_argument("--candidate", default="Next year's budget was approved by the committee.")

    def handle(self, *args, **opts):
        try:
            template = opts["template"].read_text(encoding="utf-8") if opts["template"] else DEFAULT_TEMPLATE
            rubric = rubric_from_json(opts["rubric"].read_text(encoding="utf-8") if opts["rubric"] else "")
            template_check(template)
            criterion = rubric.criterion(opts["criterion"])
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(str(exc.args[0] if exc.args else exc)) from None
        label = f"v{TEMPLATE_VERSION}" if template == DEFAULT_TEMPLATE else "custom"
        self.stdout.write(f"# template {label}, hash {template_hash(template)}; rubric hash {rubric.fingerprint()}")
        if not opts["render"]:
            self.stdout.write(template.rstrip("\n"))
            return
        for message in render_messages(template, rubric, criterion, opts["original"], opts["candidate"]):
            self.stdout.write(f"--- {message['role']}")
            self.stdout.write(message["content"])
