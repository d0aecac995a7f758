"""A judge task added by one declaration: a toy task (template, parser, run) registered here, run through the public
command line against the fake OpenAI server, its template replaced by a TOML file with the placeholder check."""

import argparse
import re

import pytest

from core.registry import RegistryError
from datamodel.connection import connect
from datamodel.judgments import Judgment, judgments, save_judgment
from judges.client import Engine
from judges.commands import main
from judges.parsing import ParseError, read_reply
from judges.prompts import DEFAULT_TEMPLATES, JudgeTemplate, TemplateError, Templates, check_templates
from judges.run import RunSummary, run_units
from judges.selection import image_rows
from judges.tasks import JUDGE_TASKS, JudgeJob, JudgeTask
from tools.fake_openai import FakeServer, Scripted

# --- the toy task: everything it needs, declared once -------------------------------------------------------------

TOY_TEMPLATE = JudgeTemplate(
    "toy_brightness", "Is this image bright or dark?\n<image>\nIt was made for: {prompt}\nAnswer [[bright]] or "
    "[[dark]].", placeholders=("{prompt}",), max_tokens=16, expected_tokens=3)


def parse_brightness(text: str) -> str:
    match = re.search(r"\[\[(bright|dark)\]\]", text or "")
    if match is None:
        raise ParseError("expected [[bright]] or [[dark]]")
    return match.group(1)


async def run_toy(job: JudgeJob, args) -> RunSummary:
    rows = image_rows(job.db, job.selection)[: job.selection.limit]
    judge = f"{job.name}:{job.config.model}"
    summary = RunSummary(judge, "toy_brightness")
    verdicts = []
    async with Engine(job.db, job.config, dry_run=job.dry_run) as engine:
        async def worker(row) -> str:
            request = TOY_TEMPLATE.build(job.templates, row.input(job.media), engine.config.image_detail,
                                         prompt=row.text)
            reply = await engine.ask(request)
            if reply.status in ("stopped", "dry_run"):
                return reply.status
            parsed = read_reply(reply, parse_brightness)
            verdicts.append(parsed.value)
            save_judgment(job.db, Judgment(
                judge, "toy_brightness", f"image:{row.image_id}", "ok" if parsed.ok else "failed", parsed.reason,
                {"brightness": parsed.value, "expect": args.expect}, raw=[reply.text], request_keys=(reply.key,),
                prompt_id=row.prompt_id, image_id=row.image_id, model_id=row.model_id))
            return "ok" if parsed.ok else "failed"

        await run_units(engine, rows, worker, summary, progress=job.progress, handle_signals=False)
    if not job.dry_run:
        summary.notes.append(f"{verdicts.count(args.expect)} of {len(verdicts)} images are {args.expect}")
    return summary


def add_toy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--expect", choices=("bright", "dark"), default="bright",
                        help="the answer counted in the summary (default bright)")


TOY = JudgeTask(
    name="toy-brightness", description="Toy judge: is each image bright or dark?", run=run_toy,
    default_suite="taxonomy", limit_help="judge the first LIMIT images (default all)", templates=(TOY_TEMPLATE,),
    add_arguments=add_toy_arguments,
)


@pytest.fixture
def toy_task():
    """The toy task registered for one test, and removed (with its template) afterwards."""
    JUDGE_TASKS.register(TOY)
    yield TOY
    JUDGE_TASKS.unregister(TOY.name)


def brightness_judge(received) -> Scripted:
    return Scripted("Mostly white pixels: [[bright]]" if "coin" in received.text else "Shadows everywhere. [[dark]]")


# --- tests ---------------------------------------------------------------------------------------------------------

def test_the_declaration_makes_a_sub_command_with_the_common_options_and_its_own(toy_task, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["toy-brightness", "--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Toy judge: is each image bright or dark?" in text
    assert "prompt suite (default: taxonomy)" in text
    assert "judge the first LIMIT images (default all)" in text
    for option in ("--subset", "--model", "--concurrency", "--dry-run", "--judge-model", "--base-url", "--expect"):
        assert option in text
    from judges.commands import DESCRIPTIONS

    assert DESCRIPTIONS["toy-brightness"] == TOY.description


def test_the_toy_task_runs_through_the_command_line_against_the_fake_server(toy_task, arena_env, capsys,
                                                                              monkeypatch):
    with FakeServer(brightness_judge) as server:
        monkeypatch.setenv("ARENA_JUDGE_BASE_URL", server.base_url)
        assert main(["toy-brightness", "--model", "alpha-model", "--expect", "dark", "--no-progress"]) == 0
        received = list(server.received)
    # the taxonomy suite has 3 prompts, alpha-model one image of each
    assert len(received) == 3
    for request in received:
        assert request.text.startswith("Is this image bright or dark?")
        assert "It was made for: An image of " in request.text
        assert len(request.image_urls) == 1
        assert request.body["max_tokens"] == TOY_TEMPLATE.max_tokens
    out = capsys.readouterr().out
    assert "gpt-judge:gpt-4o-mini toy_brightness: 3 done (0 inconsistent), 0 failed" in out
    assert "requests: 3 sent, 0 cached, 0 failed" in out
    assert "1 of 3 images are dark" in out
    db = connect(arena_env.settings.db_path)
    rows = judgments(db, "gpt-judge:gpt-4o-mini", "toy_brightness")
    db.close()
    texts = {row["prompt_id"]: row["verdict"]["brightness"] for row in rows}
    assert sorted(texts.values()) == ["bright", "bright", "dark"]  # two coin prompts, one sofa
    assert all(row["status"] == "ok" and row["verdict"]["expect"] == "dark" for row in rows)


def test_its_template_is_replaced_by_a_toml_file_and_checked_for_its_placeholders(toy_task, arena_env, capsys,
                                                                                   monkeypatch, tmp_path):
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text('toy_brightness = "Bright or dark? {prompt} <image> Reply [[bright]] or [[dark]]."\n')
    bad.write_text('toy_brightness = "Bright or dark? Reply [[bright]] or [[dark]]."\n')
    with FakeServer(brightness_judge) as server:
        monkeypatch.setenv("ARENA_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("ARENA_JUDGE_TEMPLATES", str(bad))
        assert main(["toy-brightness", "--no-progress"]) == 2
        assert server.received == []
        assert f"error: {bad}: template 'toy_brightness' lacks {{prompt}}." in capsys.readouterr().err
        monkeypatch.setenv("ARENA_JUDGE_TEMPLATES", str(good))
        assert main(["toy-brightness", "--model", "bravo-model", "--limit", "2", "--no-progress"]) == 0
        received = list(server.received)
    assert [r.text.split(" An image of ")[0] for r in received] == ["Bright or dark?"] * 2
    assert "toy_brightness: 2 done" in capsys.readouterr().out


def test_clashes_and_unknown_names_say_what_to_do(toy_task):
    with pytest.raises(RegistryError, match="judge task 'toy-brightness' is declared twice. Give the new judge task"):
        JUDGE_TASKS.register(JudgeTask("toy-brightness", "another toy", run=run_toy))
    with pytest.raises(RegistryError, match="template 'pairwise' is declared twice"):
        JUDGE_TASKS.register(JudgeTask("toy-pairwise", "a toy", run=run_toy,
                                       templates=(JudgeTemplate("pairwise", "{prompt}"),)))
    assert "toy-pairwise" not in JUDGE_TASKS
    with pytest.raises(RegistryError, match="'metrics' cannot name a judge task"):
        JUDGE_TASKS.register(JudgeTask("metrics", "a toy", run=run_toy, templates=(JudgeTemplate("toy_m", "x"),)))
    assert "toy_m" not in DEFAULT_TEMPLATES  # nothing of a refused declaration stays
    with pytest.raises(RegistryError, match=r"unknown judge task 'toy'; choices: commonsense, pairwise, "
                                            r"saneval, semvar, semvar_tokens, toy-brightness\.$"):
        JUDGE_TASKS.get("toy")
    assert Templates().toy_brightness == TOY_TEMPLATE.text
    JUDGE_TASKS.unregister("toy-brightness")  # the fixture's clean-up, checked here
    assert "toy-brightness" not in JUDGE_TASKS and "toy_brightness" not in DEFAULT_TEMPLATES
    with pytest.raises(TemplateError, match="templates: unknown template 'toy_brightness'; choices: pairwise"):
        check_templates({"toy_brightness": "{prompt}"})
    assert "pairwise" in DEFAULT_TEMPLATES  # a built-in template outlives the tasks that list it
