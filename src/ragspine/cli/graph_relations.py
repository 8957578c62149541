"""CLI commands of the relation graph: ``ragspine graph edges``, ``graph neighbours NODE`` and
``graph verify EDGE_ID``, each as the asker named by ``--clearance`` / ``--group``,
``graph rebuild LIBRARY`` and ``graph extract LIBRARY`` (model-derived edges).

:func:`add_commands` adds them to a ``graph`` sub-command group; :func:`register` makes (or
reuses) that group through :func:`~ragspine.cli.common.command_group`, so other graph commands
(roll-up, compare, derive) can share it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragspine.cli.common import (
    add_principal_arguments,
    command_group,
    open_workspace,
    principal_from,
)
from ragspine.cli.graph import write_picture
from ragspine.graph.neighbourhood import MAX_DEPTH
from ragspine.graph.relations import Edge, EdgeKind, Origin
from ragspine.graph.render import to_dot, to_svg
from ragspine.security import Principal

GRAPH_HELP = "the graph utilities: relations between terms and documents"


def _print_json(value: dict[str, Any]) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _edge_line(edge: Edge) -> str:
    flag = "verified" if edge.verified else "unverified"
    where = edge.lineage.chunk_id or edge.lineage.doc_id
    locator = json.dumps(dict(edge.lineage.locator), ensure_ascii=False, sort_keys=True)
    weight = f" x{edge.weight}" if edge.weight != 1 else ""
    return (
        f"{edge.edge_id}  {edge.source} -{edge.kind.value}-> {edge.target}{weight}  "
        f"[{edge.origin.value}, {flag}]  {where} {locator}"
    )


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind", choices=[k.value for k in EdgeKind], help="only edges of this kind"
    )
    parser.add_argument(
        "--origin", choices=[o.value for o in Origin], help="only edges of this origin"
    )
    flag = parser.add_mutually_exclusive_group()
    flag.add_argument(
        "--verified", dest="verified", action="store_const", const=True, help="only verified"
    )
    flag.add_argument(
        "--unverified",
        dest="verified",
        action="store_const",
        const=False,
        help="only unverified edges (model-derived edges waiting for a person)",
    )
    add_principal_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def cmd_edges(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        result = workspace.relations.edges(
            principal=principal_from(args),
            kind=args.kind,
            origin=args.origin,
            verified=args.verified,
            node=args.node,
            limit=args.limit,
        )
    if args.json:
        _print_json(result.to_dict())
        return 0
    for edge in result.edges:
        print(_edge_line(edge))
    shown = len(result.edges)
    more = f" (showing {shown}; raise --limit for more)" if shown < result.total else ""
    print(f"{result.total} edges{more}")
    return 0


def cmd_neighbours(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        result = workspace.relations.neighbours(
            args.node,
            principal=principal_from(args),
            depth=args.depth,
            kind=args.kind,
            origin=args.origin,
            verified=args.verified,
        )
    if args.dot is not None:
        write_picture(args.dot, to_dot(result.picture()), "--dot")
    if args.svg is not None:
        write_picture(args.svg, to_svg(result.picture()), "--svg")
    if args.json:
        _print_json(result.to_dict())
        return 0
    print(f"{result.node.id} ({result.node.label})")
    for neighbour in result.neighbours:
        kinds = ", ".join(kind.value for kind in neighbour.kinds)
        unverified = sum(
            1
            for edge in result.edges
            if not edge.verified and neighbour.node.id in (edge.source, edge.target)
        )
        doubt = f"; {unverified} unverified (model-derived)" if unverified else ""
        print(
            f"  {'  ' * (neighbour.distance - 1)}{neighbour.node.id} ({neighbour.node.label}): "
            f"{neighbour.edges} edges [{kinds}{doubt}]"
        )
    print(f"{len(result.neighbours)} neighbours, {len(result.edges)} edges")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    asker = principal_from(args)
    person = Principal(asker.clearance, asker.groups, args.by)
    with open_workspace(args) as workspace:
        edge = workspace.relations.verify_edge(args.edge_id, by=person)
    if args.json:
        _print_json(edge.to_dict())
        return 0
    print(_edge_line(edge))
    if edge.verified_by:
        print(f"verified by {edge.verified_by} at {edge.verified_at}")
    else:  # a glossary's or a document's own edge: verified as stored, by no one
        print(f"already verified: a {edge.origin} edge needs no one to confirm it")
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        stored = workspace.rebuild_relations(args.library)
    print(f"library {args.library}: {stored} deterministic edges stored")
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        added = workspace.extract_model_relations(
            args.library, principal=principal_from(args), run_id=args.run_id,
            provider=args.provider,
        )  # fmt: skip
    print(f"library {args.library}: {added} new model-derived edges (unverified)")
    return 0


def add_commands(group: argparse._SubParsersAction) -> None:
    """Add ``edges``, ``neighbours``, ``verify``, ``rebuild`` and ``extract`` to the ``graph``
    group."""
    edges = group.add_parser(
        "edges",
        help="list the relation edges you may see",
        description="List relation edges (glossary hierarchy, document mentions, terms named "
        "in one sentence, extracted relations) that the asker may see.",
    )
    edges.add_argument("--node", help="only edges touching this node (entity:acme, ACME Corp)")
    edges.add_argument("--limit", type=int, help="show at most this many edges")
    _filters(edges)
    edges.set_defaults(func=cmd_edges)

    neighbours = group.add_parser(
        "neighbours",
        help="the nodes near one node",
        description="The nodes within --depth visible edges of NODE, nearest first.",
    )
    neighbours.add_argument(
        "node", metavar="NODE", help="entity:acme, metric:revenue, a glossary spelling, or "
        "document:LIBRARY:DOC_ID",
    )  # fmt: skip
    neighbours.add_argument(
        "--depth", type=int, default=1, help=f"edges away from NODE, 1 to {MAX_DEPTH} (default 1)"
    )
    neighbours.add_argument(
        "--dot", type=Path, metavar="FILE", help="write the neighbourhood as Graphviz DOT"
    )
    neighbours.add_argument(
        "--svg", type=Path, metavar="FILE", help="write the neighbourhood as SVG"
    )
    _filters(neighbours)
    neighbours.set_defaults(func=cmd_neighbours)

    verify = group.add_parser(
        "verify",
        help="confirm a model-derived edge",
        description="Confirm an edge you may see (model-derived edges stay unverified until "
        "a person does); confirming it again changes nothing.",
    )
    verify.add_argument("edge_id", metavar="EDGE_ID", help="the id 'graph edges' shows")
    verify.add_argument("--by", required=True, metavar="NAME", help="who confirms it")
    add_principal_arguments(verify)
    verify.add_argument("--json", action="store_true", help="print the edge as JSON")
    verify.set_defaults(func=cmd_verify)

    rebuild = group.add_parser(
        "rebuild",
        help="re-extract a library's mentions and co-occurrences",
        description="Re-extract the deterministic edges of every document of LIBRARY from its "
        "stored chunks with the current glossary (after adding terms, or for documents "
        "ingested before the relation graph); model-derived edges stay.",
    )
    rebuild.add_argument("library", metavar="LIBRARY")
    rebuild.set_defaults(func=cmd_rebuild)

    extract = group.add_parser(
        "extract",
        help="ask a model for relations between the terms of a library's chunks",
        description="Send each chunk of LIBRARY the asker may see (never a restricted one) "
        "with the glossary terms it names to the model; the relations it proposes between "
        "those terms are stored model-derived and unverified, with --run-id as lineage.",
    )
    extract.add_argument("library", metavar="LIBRARY")
    extract.add_argument("--run-id", required=True, metavar="ID", help="lineage of this run")
    extract.add_argument(
        "--provider", help="the generating provider (default: the workspace's llm.toml)"
    )
    add_principal_arguments(extract)
    extract.set_defaults(func=cmd_extract)


def register(subparsers: argparse._SubParsersAction) -> None:
    add_commands(command_group(subparsers, "graph", GRAPH_HELP))
