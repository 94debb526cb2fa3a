"""The `kata` command. Each submodule holds one family of commands; this file only assembles them.

The CLI parses, calls the library, renders: no grading logic lives under grader/cli/.
"""
from __future__ import annotations

import click

from grader.cli import bench, grade, interview, practice, serve, setup


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="kata")
def cli() -> None:
    """Practice GPU-kernel interview questions, graded on a GPU or on kata's CPU emulator.

    \b
    Start here:
      kata list                 the katas and your progress
      kata start reduce         make a workspace with a stub kernel and start the clock
      kata grade                grade the workspace you are in
      kata hint                 the next hint (recorded)
    """


for _module in (grade, practice, interview, bench, serve, setup):
    for _command in _module.commands:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="kata")
