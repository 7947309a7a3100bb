"""The five top-level folders install as sub-packages of one import package, `gpuprices`
(`spiders/` as `gpuprices.spiders`, ...): their names are too generic to own in site-packages.
Everything else about the distribution is in pyproject.toml; this file only lists the packages,
found afresh at every build so that a new provider package needs no entry here."""

from setuptools import find_packages, setup

FOLDERS = ["spiders", "flows", "warehouse", "sizing", "reports"]

found = find_packages(include=[f"{f}*" for f in FOLDERS])
packages = ["gpuprices"] + [f"gpuprices.{p}" for p in found]
package_dir = {"gpuprices": "gpuprices", **{f"gpuprices.{f}": f for f in FOLDERS}}

setup(packages=packages, package_dir=package_dir)
