"""Pserver mode: chains the pure passes over snapshots of the user's programs.

transpile_pserver() snapshots (clones) the main and startup programs, computes the plan (ps_plan.py: what
optimizes what, slicing, placement), rewrites the user's programs in place into the trainer programs (old
scripts run default_main_program() after transpile), and returns an object whose getters build the
pserver programs from the snapshots. The getters keep no half-built state: any order, any number of calls
(Paddle crashed on get_trainer_program then get_pserver_program, because the first edited what the second
read).
"""

import dataclasses

from ...backends.ps.records import set_trainer_plan, trainer_plan
from ...ir import notify_changed
from ...ops import info
from ...backends.endpoints import parse_endpoint
from .program_rewrite import overwrite_program
from .ps_geo import (build_geo_pserver_main, build_geo_pserver_startup, build_geo_trainer_main,
                     build_geo_trainer_startup, check_geo)
from .ps_plan import build_plan
from .ps_pserver_pass import build_pserver_main
from .ps_startup_pass import build_pserver_startup
from .ps_trainer_pass import build_trainer_main, build_trainer_startup, trainer_record

__all__ = ["transpile_pserver", "PserverTranspileResult"]


class PserverTranspileResult:
    def __init__(self, plan, main_snapshot, startup_snapshot, user_main, user_startup, geo=False):
        self.plan = plan
        self.geo = geo
        self._main = main_snapshot
        self._startup = startup_snapshot
        self._user_main = user_main
        self._user_startup = user_startup

    def _check_endpoint(self, endpoint):
        ep = parse_endpoint(endpoint, "endpoint", server=True)
        if ep not in self.plan.endpoints:
            raise ValueError("endpoint %s is not one of the pservers given to transpile (%s)"
                             % (ep, ",".join(self.plan.endpoints)))
        return ep

    def trainer_program(self, wait_port=True):
        """The user's main program, rewritten in place at transpile time into the trainer program."""
        for prog in (self._user_main, self._user_startup):
            rec = trainer_plan(prog)
            if rec is not None and rec.wait_port != bool(wait_port):
                set_trainer_plan(prog, dataclasses.replace(rec, wait_port=bool(wait_port)))
        return self._user_main

    def trainer_startup_program(self):
        return self._user_startup

    def pserver_program(self, endpoint):
        build = build_geo_pserver_main if self.geo else build_pserver_main
        prog = build(self.plan, self._main, self._check_endpoint(endpoint))
        prog._parameters_on_pservers = self.plan.overview
        return prog

    def pserver_startup_program(self, endpoint):
        build = build_geo_pserver_startup if self.geo else build_pserver_startup
        prog = build(self.plan, self._main, self._startup, self._check_endpoint(endpoint))
        prog._parameters_on_pservers = self.plan.overview
        return prog


def _set_trainer_attrs(prog, plan, current_endpoint):
    prog._is_distributed = True
    prog._endpoints = list(plan.endpoints)
    prog._ps_endpoint = current_endpoint
    prog._is_chief = plan.trainer_id == 0
    prog._parameters_on_pservers = plan.overview
    # Paddle's attribute names its one table; with several, the list of them
    tables = list(plan.tables)
    prog._distributed_lookup_table = (tables[0] if len(tables) == 1 else tables) if tables else None


def _check_config(cfg, sync_mode):
    if cfg.enable_dc_asgd and sync_mode:
        raise ValueError("config.enable_dc_asgd = True needs async mode (transpile(sync_mode=False) or "
                         "config.sync_mode = False): delay compensation corrects stale async gradients")


def transpile_pserver(cfg, program, startup_program, trainer_id, pserver_endpoints, trainers, sync_mode,
                      current_endpoint="127.0.0.1:6174"):
    for prog, what in ((program, "program"), (startup_program, "startup_program")):
        if any(info(op.type).runtime == "ps" for op in prog.global_block().ops):     # it talks to pservers
            # Paddle 1.8.5 transpiles it again and builds a wrong job: a second backward pass whose gradients no
            # pserver receives, parameters updated twice (tests/unit/test_transpile_twice_paddle18.py)
            raise ValueError("transpile: %s was already transpiled for pserver mode; transpile the original "
                             "program (build it again) instead (transpiling it again would add a second "
                             "backward pass and second updates to the first)" % what)
    geo = bool(getattr(cfg, "geo_sgd_mode", False))
    if geo:
        sync_mode = False    # Geo-SGD pushes deltas asynchronously (Paddle's too)
    _check_config(cfg, sync_mode)
    main_snapshot = program.clone()
    startup_snapshot = startup_program.clone()
    plan = build_plan(cfg, main_snapshot, trainer_id, pserver_endpoints, trainers, sync_mode)

    if geo:
        check_geo(cfg, plan)
        trainer_main = build_geo_trainer_main(plan, main_snapshot, cfg.geo_sgd_need_push_nums)
        trainer_startup = build_geo_trainer_startup(plan, startup_snapshot, main_snapshot)
    else:
        trainer_main = build_trainer_main(plan, main_snapshot)
        trainer_startup = build_trainer_startup(plan, startup_snapshot, main_snapshot)
    record = trainer_record(plan, wait_port=True, geo=geo)
    for prog in (trainer_main, trainer_startup):
        _set_trainer_attrs(prog, plan, current_endpoint)
        set_trainer_plan(prog, record)
    notify_changed(trainer_main, "DistributeTranspiler.transpile (trainer main)")
    notify_changed(trainer_startup, "DistributeTranspiler.transpile (trainer startup)")
    overwrite_program(program, trainer_main, "DistributeTranspiler.transpile")
    overwrite_program(startup_program, trainer_startup, "DistributeTranspiler.transpile")
    return PserverTranspileResult(plan, main_snapshot, startup_snapshot, program, startup_program, geo)
