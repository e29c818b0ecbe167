"""The worst-case cost of a CEL filter, estimated from its text before it is ever run.

The ``cel`` package compiles and runs expressions but offers no cost limit and no syntax tree,
so this module parses the expression itself (a Pratt parser over CEL's grammar) and bounds,
as Kubernetes does for its CEL rules, what evaluating it can cost on the largest body an event
can have. A unit is one step of the interpreter: a comprehension's iteration, a call, an
operator, or ten characters an operation reads, compares or copies.

Sizes are tracked with the cost: a list literal's elements, a string's characters, what
``map``/``filter``/``+`` make. Anything read from ``event`` is at most ``INPUT_SIZE``
characters *in total*, so a comprehension over such a list (at most ``INPUT_SIZE / 2``
elements) costs at most ``n * f(1) + f(INPUT_SIZE)`` where ``f`` is its body's cost for an
element of a given size: a body's cost grows at least linearly with its element's size, so the
elements' sizes sharing one total is at worst one big element and the rest tiny.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

INPUT_SIZE = 64 * 1024
"""Characters of a delivered body's largest string or list, a bound on anything read from it."""
CHARS_PER_UNIT = 10
MAX_DEPTH = 96
"""The ``cel`` parser's own nesting limit: deeper expressions are refused by either."""

Node = tuple[object, ...]


class CostError(ValueError):
    """The expression cannot be costed (the message says why)."""


# -- tokens ------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''
        |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)
_KEYWORDS = {"true", "false", "null"}


def _tokens(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise CostError(f"unexpected character at {at + 1}")
        kind = match.lastgroup or ""
        if kind != "space":
            found.append((kind, match.group()))
        at = match.end()
    found.append(("end", ""))
    return found


# -- syntax tree -------------------------------------------------------------------------------
# Nodes are tuples: ("lit", size[, text]), ("ident", name), ("select", operand), ("index", operand,
# index), ("call", target | None, name, args), ("list", items), ("map", pairs),
# ("unary", operand), ("binary", op, left, right), ("cond", test, yes, no).

_BINARY = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 3,
    "<=": 3,
    ">": 3,
    ">=": 3,
    "in": 3,
    "+": 4,
    "-": 4,
    "*": 5,
    "/": 5,
    "%": 5,
}


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0
        self.depth = 0

    def peek(self) -> str:
        return self.tokens[self.at][1]

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.at]
        if token[0] == "end" or (expected is not None and token[1] != expected):
            raise CostError(f"expected {expected or 'more'!r} at token {self.at + 1}")
        self.at += 1
        return token

    def expression(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CostError("expression nested too deeply")
        test = self.binary(1)
        if self.peek() == "?":
            self.take()
            yes = self.binary(1)
            self.take(":")
            test = ("cond", test, yes, self.expression())
        self.depth -= 1
        return test

    def binary(self, floor: int) -> Node:
        left = self.unary()
        while (level := _BINARY.get(self.peek(), 0)) >= floor:
            op = self.take()[1]
            left = ("binary", op, left, self.binary(level + 1))
        return left

    def unary(self) -> Node:
        signs = 0
        while self.peek() in ("!", "-"):
            self.take()
            signs += 1
        node = self.member(self.primary())
        for _ in range(signs):
            node = ("unary", node)
        return node

    def member(self, node: Node) -> Node:
        while True:
            if self.peek() == ".":
                self.take()
                if self.peek() == "?":
                    self.take()
                name = self.take()[1]
                if self.peek() == "(":
                    node = ("call", node, name, self.arguments("(", ")"))
                else:
                    node = ("select", node)
            elif self.peek() == "[":
                self.take()
                if self.peek() == "?":
                    self.take()
                node = ("index", node, self.expression())
                self.take("]")
            else:
                return node

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "string":
            return ("lit", len(text), text)
        if kind == "number" or text in _KEYWORDS:
            return ("lit", 1)
        if text == "(":
            inner = self.expression()
            self.take(")")
            return inner
        if text == "[":
            return ("list", self.arguments(None, "]"))
        if text == "{":
            return ("map", self.pairs())
        if text == ".":
            kind, text = self.take()
        if kind == "ident":
            return self.name(text)
        raise CostError(f"unexpected {text or 'end'!r}")

    def name(self, text: str) -> Node:
        if self.peek() == "(":
            return ("call", None, text, self.arguments("(", ")"))
        if self.peek() == "{" and text[:1].isupper():  # a message: Type{field: value}
            self.take()
            return ("map", self.pairs())
        return ("ident", text)

    def arguments(self, opening: str | None, closing: str) -> list[Node]:
        if opening is not None:
            self.take(opening)
        items: list[Node] = []
        while self.peek() != closing:
            if self.peek() == "?":
                self.take()
            items.append(self.expression())
            if self.peek() != closing:
                self.take(",")
        self.take(closing)
        return items

    def pairs(self) -> list[tuple[Node, Node]]:
        found: list[tuple[Node, Node]] = []
        while self.peek() != "}":
            if self.peek() == "?":
                self.take()
            key = self.expression()
            self.take(":")
            found.append((key, self.expression()))
            if self.peek() != "}":
                self.take(",")
        self.take("}")
        return found


def parse(text: str) -> Node:
    parser = _Parser(text)
    tree = parser.expression()
    if parser.tokens[parser.at][0] != "end":
        raise CostError(f"unexpected {parser.peek()!r}")
    return tree


# -- cost --------------------------------------------------------------------------------------

MAX_VISITS = 50_000
"""Nodes the estimate may visit: an expression that needs more is refused as too complex."""


@dataclass(frozen=True, slots=True)
class Shape:
    """An upper bound on a value's size (characters, elements or entries; 1 for a scalar)
    and on its elements'. ``read`` values come from the event: their parts share ``size``."""

    size: int
    item: Shape | None = None
    read: bool = False

    def element(self) -> Shape:
        if self.read:
            return Shape(self.size, read=True)
        return self.item if self.item is not None else SCALAR

    def count(self) -> int:
        """How many elements iterating it can meet."""
        return max(1, self.size // 2) if self.read else self.size


SCALAR = Shape(1)
EVENT = Shape(INPUT_SIZE, read=True)
Scope = Mapping[str, Shape]


@dataclass(frozen=True, slots=True)
class Cost:
    units: int
    shape: Shape


def _scan(*shapes: Shape) -> int:
    return 1 + math.ceil(sum(shape.size for shape in shapes) / CHARS_PER_UNIT)


def _widest(*shapes: Shape) -> Shape | None:
    if not shapes:
        return None
    item = _widest(*(shape.item for shape in shapes if shape.item is not None))
    return Shape(max(shape.size for shape in shapes), item, any(s.read for s in shapes))


_MACROS = {"all", "exists", "exists_one", "map", "filter"}
_SCALAR_CALLS = {"size", "has", "type", "int", "uint", "double", "bool", "dyn", "duration"}
_REPEAT = re.compile(r"\{(\d+)(?:,(\d*))?\}")


class _Estimator:
    def __init__(self) -> None:
        self.visits = 0

    def cost(self, node: Node, scope: Scope) -> Cost:
        self.visits += 1
        if self.visits > MAX_VISITS:
            raise CostError("expression too complex to estimate")
        kind, *parts = node
        if kind == "lit":
            return Cost(1, Shape(_int(parts[0])))
        if kind == "ident":
            return Cost(1, scope.get(str(parts[0]), EVENT))
        if kind == "select":
            inner = self.cost(_node(parts[0]), scope)
            return Cost(inner.units + 1, inner.shape.element() if inner.shape.read else EVENT)
        if kind == "index":
            target, index = self.cost(_node(parts[0]), scope), self.cost(_node(parts[1]), scope)
            return Cost(target.units + index.units + 1, target.shape.element())
        if kind == "list":
            items = [self.cost(item, scope) for item in _nodes(parts[0])]
            shape = Shape(len(items), _widest(*(i.shape for i in items)))
            return Cost(1 + sum(i.units for i in items), shape)
        if kind == "map":
            pairs = [(self.cost(k, scope), self.cost(v, scope)) for k, v in _pairs(parts[0])]
            units = 1 + sum(k.units + v.units for k, v in pairs)
            # One element shape for keys (iterated) and values (indexed): the widest of both.
            shapes = [shape for k, v in pairs for shape in (k.shape, v.shape)]
            return Cost(units, Shape(len(pairs), _widest(*shapes)))
        if kind == "unary":
            inner = self.cost(_node(parts[0]), scope)
            return Cost(inner.units + 1, inner.shape)
        if kind == "cond":
            test, yes, no = (self.cost(_node(part), scope) for part in parts)
            shape = _widest(yes.shape, no.shape) or SCALAR
            return Cost(test.units + max(yes.units, no.units), shape)
        if kind == "binary":
            left, right = self.cost(_node(parts[1]), scope), self.cost(_node(parts[2]), scope)
            return _binary(str(parts[0]), left, right)
        return self.call(node, scope)

    def call(self, node: Node, scope: Scope) -> Cost:
        _, target_node, name, arg_nodes = node
        args = _nodes(arg_nodes)
        if target_node is not None and name in _MACROS and args and args[0][0] == "ident":
            range_ = self.cost(_node(target_node), scope)
            return self.comprehension(range_, str(name), args, scope)
        operands = [self.cost(arg, scope) for arg in args]
        if target_node is not None:
            operands.insert(0, self.cost(_node(target_node), scope))
        units = sum(part.units for part in operands)
        shapes = [part.shape for part in operands]
        if name == "matches" and len(operands) == 2:
            program = _regex_size(args[-1], shapes[1])
            return Cost(units + program * CHARS_PER_UNIT + program * _scan(shapes[0]), SCALAR)
        if name in _SCALAR_CALLS:
            return Cost(units + 1, SCALAR)
        if name in ("string", "bytes"):
            return Cost(units + _scan(*shapes), Shape(max([20, *(s.size for s in shapes)])))
        return Cost(units + _scan(*shapes), SCALAR)

    def comprehension(self, range_: Cost, macro: str, args: list[Node], scope: Scope) -> Cost:
        variable = str(args[0][1])

        def body(element: Shape) -> Cost:
            inner = {**scope, variable: element}
            costs = [self.cost(part, inner) for part in args[1:]]
            return Cost(sum(c.units for c in costs) + 1, costs[-1].shape if costs else SCALAR)

        units = _iterations(range_.shape, lambda element: body(element).units)
        if macro not in ("map", "filter"):
            return Cost(range_.units + units, SCALAR)
        element = range_.shape.element()
        made = Shape(range_.shape.count(), body(element).shape if macro == "map" else element)
        return Cost(range_.units + units + _copies(range_.shape, made), made)


def _binary(op: str, left: Cost, right: Cost) -> Cost:
    units = left.units + right.units
    if op == "+":
        a, b = left.shape, right.shape
        item = _widest(a.element(), b.element()) if a.item or b.item else None
        grown = Shape(a.size + b.size, item)
        return Cost(units + _scan(grown), grown)
    if op == "in":
        return Cost(units + right.shape.count() * _scan(left.shape), SCALAR)
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return Cost(units + _scan(left.shape, right.shape), SCALAR)
    return Cost(units + 1, SCALAR)


def _regex_size(node: Node, pattern: Shape) -> int:
    """A bound on the compiled size of a ``matches`` pattern: its length times its counted
    repetitions (``a{100}`` is a hundred copies); a pattern read from the event is as long as
    the event, each character possibly a repetition."""
    if node[0] != "lit" or len(node) < 3:
        return pattern.size * pattern.size
    repeats = 1
    for low, high in _REPEAT.findall(str(node[2])):
        repeats *= max(int(low), int(high) if high else int(low) + 1, 1)
    return pattern.size * repeats


def _iterations(range_: Shape, units_for: Callable[[Shape], int]) -> int:
    """A comprehension's body over every element: ``n * f(element)``, or for elements read from
    the event, which share one total size, ``n * f(1) + f(total)`` (the module's docstring)."""
    if range_.read:
        return range_.count() * units_for(Shape(1, read=True)) + units_for(range_.element())
    return range_.count() * units_for(range_.element())


def _weight(shape: Shape) -> int:
    """What copying a value costs: its elements' weights, or its characters."""
    if shape.item is not None:
        return 1 + shape.size * _weight(shape.item)
    return 1 + shape.size // CHARS_PER_UNIT


def _copies(range_: Shape, made: Shape) -> int:
    """``map`` and ``filter`` copy the list they make at each element they add (the
    interpreter's), so a made list of ``n`` costs about ``n * n / 2`` element copies; from a
    range read from the event, its elements' weights add up to at most the event's."""
    count = made.count()
    if range_.read:
        return count * (count + _weight(range_.element()))
    return count * count // 2 * _weight(made.element())


def _int(value: object) -> int:
    return value if isinstance(value, int) else 1


def _node(value: object) -> Node:
    return value if isinstance(value, tuple) else ("lit", 1)


def _nodes(value: object) -> list[Node]:
    return [item for item in value if isinstance(item, tuple)] if isinstance(value, list) else []


def _pairs(value: object) -> list[tuple[Node, Node]]:
    return value if isinstance(value, list) else []


def estimated_cost(expression: str) -> int:
    """The worst-case cost of evaluating ``expression`` on any event, in units (module doc);
    ``CostError`` if it cannot be estimated."""
    try:
        return _Estimator().cost(parse(expression), {"event": EVENT}).units
    except RecursionError:
        raise CostError("expression nested too deeply") from None
