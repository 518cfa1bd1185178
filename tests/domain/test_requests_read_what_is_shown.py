"""Requests read what the report shows where the cleaned text cannot: an uploaded log named by
its link, a memory graph (blind paired read of 2026-12-02: Megatron-LM#3871 and DeepSpeed#3286
and #3590 were asked for the output they showed)."""
from __future__ import annotations

from triagebot.domain import missing
from triagebot.domain.environment import extract
from triagebot.text.signal import full_text


def _keys(title: str, raw: str, stage: str | None = "S4") -> list[str]:
    text = full_text(title, raw)
    items = missing.missing_info(text, extract(text), stage, True, framework="deepspeed",
                                 image_shown=missing.image_shown(raw),
                                 error_image=missing.error_in_image(raw))
    return [item.key for item in items]


LOG_LINK = "[cudagraph_error.log](https://github.com/user-attachments/files/25993208/cudagraph_error.log)"


def test_an_uploaded_log_is_read_as_the_output_though_cleaning_removed_its_link() -> None:
    assert "cudagraph_error.log](" in full_text("t", f"Log: {LOG_LINK}")
    assert "traceback" not in _keys("Cannot capture cudagraph after loading checkpoint",
                                     f"**Describe the bug**\nLog: {LOG_LINK}\n")


def test_a_bare_report_without_the_log_is_still_asked_what_it_sees() -> None:
    assert "traceback" in _keys("Cannot capture cudagraph after loading checkpoint",
                                "**Describe the bug**\nCapturing the graph fails after loading.\n")


MEMORY = ("Hello,\n\nIn a distillation setup with zero3 and zero.Init, I see a memory leak: max "
          "allocated memory goes up every iteration. With zero.Init disabled there's no leak.\n\n"
          "with zero.Init enabled\n")
GRAPH = "![image](https://user-images.githubusercontent.com/1/232717025-2ef9aa36.png)\n"


def test_a_memory_report_with_its_graph_is_not_asked_what_it_sees() -> None:
    title = "[BUG] Deepspeed zero3 memory leak with student+teacher"
    assert "traceback" in _keys(title, MEMORY)
    assert "traceback" not in _keys(title, MEMORY + GRAPH)


def test_a_screenshot_that_is_the_whole_report_is_still_asked_as_text() -> None:
    """ColossalAI#2877 shows its error only as a picture: nobody can search a picture."""
    raw = f"### 🐛 Describe the bug\n\n{GRAPH}\n### Environment\ntorch==1.13.1\n"
    assert missing.image_shown(raw)
    assert "traceback" in _keys("Training reward models with LoRA is not supported", raw, None)


def test_a_linked_requirements_file_is_no_log() -> None:
    raw = ("**Describe the bug**\nTraining crashes with an error.\nMy environment: "
           "[requirements.txt](https://github.com/user-attachments/files/1/requirements.txt)\n")
    assert missing._LOG_ATTACHED.search(full_text("Training crashes", raw)) is None


def test_a_lightning_trainer_on_several_nodes_is_not_one_process() -> None:
    text = "Trainer(devices=1, num_nodes=4, strategy='ddp_spawn')"
    assert not missing._one_process(text, extract(text))
    assert missing._one_process("Trainer(devices=1)", extract("Trainer(devices=1)"))
