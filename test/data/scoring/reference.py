#!/usr/bin/env python3
"""Reference scores for src/scoring/, computed independently of the TypeScript.

Regenerate from anywhere with `python3 test/data/scoring/reference.py`: the script writes
reference.json beside itself (pretty, keys sorted, so a rerun gives the same bytes). Python 3's
standard library only, and no code shared with the TypeScript: the rules are applied here from
/work/shared/spec/spec-scoring.md in the original evaluator's own language, so that Python's
str(), float(), round(), ==, truthiness, .lower(), .strip() and re's `\\b\\w+\\b` give their
meaning natively rather than through a port.

What the service documents where the spec leaves a choice (marked "documented choice" below, and
stated in src/scoring/spec-score.ts's comment):
- Text values read as `str(x or "").strip()` wherever the spec writes str() of a text that may be
  missing (the non_empty mode, sim, kw, the text path): a missing value, null, false, 0, "", []
  and {} are empty text, never "None" or "0" (the original's evaluator reads them so).
- Tool usage is the mean of the parts the tool config asks for (a part whose list or map is empty
  is left out, so completeness is never 0/0).
- In chaining, a list result is looked up by an integer index first (a JSON integer, or a string
  Python's int() reads, negative counting from the end, as Python's indexing does), else by the
  first item that is an object with that key.
- A component's dimension name is never shadowed by a field: a field named like a component
  ("structure", "type_penalty", "consistency_penalty", "tool_usage"), or whose name starts with
  "field:", is reported as "field:<name>" (the original let the later key overwrite the earlier).
  The total adds every component, as the components are computed.
- Output parsing: the candidates are the whole text, the first fenced block (``` or ```json, any
  case), the slice from the first "{" to the last "}", and from the first "[" to the last "]";
  each is parsed after the repair pass (raw CR and LF inside strings escaped, a comma before "}" or
  "]" outside strings dropped; the pass leaves valid JSON as it is); then the same candidates
  again with every single quote turned into a double quote. Any JSON value counts as parsed.
- JSON numbers: JavaScript keeps no difference between 1 and 1.0, so every case here is read
  with integral floats as ints (parse_float below), in the cases and in parsed output text alike;
  and NaN / Infinity literals, which Python's json accepts and JSON does not, are refused.

The simple scorers' cases use the same cases' conventions; their similarity is a plain
dynamic-programming Levenshtein distance over code points (the cases use BMP text, where the
package's UTF-16 units are the same).
"""

import json
import math
import os
import re
import sys

# ---------------------------------------------------------------------------------------------
# JSON as the service sees it.


def parse_float(text):
    value = float(text)
    return int(value) if value.is_integer() else value


def refuse_constant(name):
    raise ValueError(f'{name} is not JSON')


def loads(text):
    return json.loads(text, parse_float=parse_float, parse_constant=refuse_constant)


def as_service_sees(value):
    """The value after a JSON round trip in sorted key order, as the TypeScript test reads it."""
    return loads(json.dumps(value, sort_keys=True, allow_nan=False))


# ---------------------------------------------------------------------------------------------
# The agent's printed output.


def repaired(text):
    """Raw CR / LF inside strings escaped; a comma followed only by whitespace and then } or ]
    (outside strings) dropped."""
    out = []
    in_string = False
    escaped = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == '\\':
                escaped = True
            elif c == '"':
                in_string = False
            elif c == '\n':
                c = '\\n'
            elif c == '\r':
                c = '\\r'
            out.append(c)
        elif c == '"':
            in_string = True
            out.append(c)
        elif c == ',':
            j = i + 1
            while j < len(text) and text[j] in ' \t\n\r':
                j += 1
            if not (j < len(text) and text[j] in '}]'):
                out.append(c)
        else:
            out.append(c)
        i += 1
    return ''.join(out)


FENCE = re.compile(r'```(?:json)?\s*(.*?)```', re.S | re.I)
NOTHING = object()


def candidates(text):
    found = [text]
    fence = FENCE.search(text)
    if fence:
        found.append(fence.group(1))
    for opening, closing in (('{', '}'), ('[', ']')):
        start = text.find(opening)
        end = text.rfind(closing)
        if start != -1 and end > start:
            found.append(text[start:end + 1])
    return found


def parse_output(text):
    tries = candidates(text)
    for candidate in tries + [t.replace("'", '"') for t in tries]:
        try:
            return loads(repaired(candidate))
        except ValueError:
            pass
    return text


# ---------------------------------------------------------------------------------------------
# Text measures.

STOPWORDS = frozenset('''
a above after all an and any are as at be been before being below between both but by can could
did do does during each either every few for from had has have he her him his i in into is it its
may me might more most my neither no nor not of on only or other our own same shall she should so
some such than that the their them these they this those through to too very was we were what
which who whom will with would yet you your
'''.split())
assert len(STOPWORDS) == 94


def text_of(value):
    return str(value or '').strip()


def tokens(text):
    return set(re.findall(r'\b\w+\b', text.lower()))


def sim(actual, expected):
    a = text_of(actual)
    e = text_of(expected)
    if not a and not e:
        return 1.0
    if not a:
        return 0.0
    if not e:
        return 1.0
    A = tokens(a)
    E = tokens(e)
    if not E:
        return 1.0 if A else 0.5
    shared = len(A & E)
    jaccard = shared / len(A | E)
    coverage = shared / len(E)
    r = len(a) / max(len(e), 1)
    if r < 0.3:
        factor = r / 0.3
    elif r > 3:
        factor = max(0.5, 1 - 0.1 * (r - 3))
    else:
        factor = 1.0
    return (0.6 * coverage + 0.4 * jaccard) * factor


def kw(actual, expected):
    a = text_of(actual)
    e = text_of(expected)
    if not e:
        return 1.0 if a else 0.0
    if not a:
        return 0.0
    keywords = tokens(e) - STOPWORDS
    if not keywords:
        return 1.0
    lowered = a.lower()
    return sum(1 for word in keywords if word in lowered) / len(keywords)


# ---------------------------------------------------------------------------------------------
# Fields.

IMPORTANCE = {'critical': 3, 'important': 2, 'minor': 1}
COMPONENTS = ('structure', 'type_penalty', 'consistency_penalty', 'tool_usage')


def field_key(name):
    """Documented choice: a field never shadows a component's dimension."""
    return 'field:' + name if name in COMPONENTS or name.startswith('field:') else name


def lowered_values(config):
    return [str(v).lower() for v in config.get('values', [])]


def score_enum(actual, expected, config):
    weight = config.get('weight', 0)
    a = str(actual or '').strip().lower()
    e = str(expected or '').strip().lower()
    if a == e:
        return float(weight)
    if config.get('partial_credit') and a in lowered_values(config):
        partial = config.get('partial_score')
        if partial is None:
            partial = max(1, round(0.2 * weight))
        return float(partial)
    return 0.0


def score_number(actual, expected, config):
    weight = config.get('weight', 0)
    try:
        a = float(actual or 0)
        e = float(expected or 0)
    except (ValueError, TypeError):
        return 0.0
    diff = abs(a - e)
    bands = config.get('tolerance_bands', [])
    if bands:
        for band in sorted(bands, key=lambda band: band['within']):
            if diff <= band['within']:
                return weight * band['score_pct']
        return 0.0
    tolerance = config.get('tolerance', 10)
    if diff <= tolerance:
        return float(weight)
    if diff <= 2 * tolerance:
        return 0.5 * weight
    return 0.0


def score_text(actual, expected, config):
    weight = config.get('weight', 0)
    mode = config.get('eval_mode', 'non_empty')
    if mode == 'non_empty':
        return float(weight) if text_of(actual) else 0.0
    if mode == 'skip':
        return 0.0
    if mode in ('similarity', 'llm_judge'):
        return weight * sim(actual, expected)
    if mode == 'keyword_coverage':
        return weight * kw(actual, expected)
    return 0.0


def score_field(actual, expected, config):
    kind = config.get('type')
    if kind == 'enum':
        return score_enum(actual, expected, config)
    if kind == 'number':
        return score_number(actual, expected, config)
    if kind == 'boolean':
        return float(config.get('weight', 0)) if actual == expected else 0.0
    if kind == 'text':
        return score_text(actual, expected, config)
    return None


def converts(value):
    try:
        float(value)
        return True
    except (ValueError, TypeError):
        return False


def type_error(actual, config):
    kind = config.get('type')
    if kind == 'number':
        return not converts(actual)
    if kind == 'boolean':
        return not isinstance(actual, bool) and not (isinstance(actual, (int, float)) and actual in (0, 1))
    if kind == 'enum':
        return str(actual).lower().strip() not in lowered_values(config)
    if kind == 'text':
        return not isinstance(actual, str)
    return False


# ---------------------------------------------------------------------------------------------
# Consistency.


def inferred_rules(fields):
    numbers = [name for name, config in fields.items() if config.get('type') == 'number']
    enums = [name for name, config in fields.items() if config.get('type') == 'enum']
    return [{'field_a': n, 'field_b': e, 'type': 'correlation', 'penalty': 3} for n in numbers for e in enums]


def contradicts(fields, field_a, a, field_b, b):
    config_a = fields.get(field_a, {})
    config_b = fields.get(field_b, {})
    if config_a.get('type') != 'number' or config_b.get('type') != 'enum':
        return False
    try:
        v = float(a)
    except (ValueError, TypeError):
        return False
    lo, hi = config_a.get('range', [0, 100])
    n = (v - lo) / max(hi - lo, 1)
    values = lowered_values(config_b)
    chosen = str(b).lower().strip()
    if len(values) < 2 or chosen not in values:
        return False
    pos = values.index(chosen) / (len(values) - 1)
    return (n > 0.7 and pos > 0.7) or (n < 0.3 and pos < 0.3)


OPERATORS = {
    '<=': lambda a, b: a <= b,
    '<': lambda a, b: a < b,
    '>=': lambda a, b: a >= b,
    '>': lambda a, b: a > b,
}


def consistency_penalty(fields, rules, output):
    penalty = 0.0
    for rule in rules or inferred_rules(fields):
        field_a = rule.get('field_a', '')
        field_b = rule.get('field_b', '')
        a = output.get(field_a)
        b = output.get(field_b)
        if a is None or b is None:
            continue
        kind = rule.get('type', 'correlation')
        if kind == 'correlation':
            violated = contradicts(fields, field_a, a, field_b, b)
        elif kind == 'ordering':
            if not (converts(a) and converts(b)):
                continue
            holds = OPERATORS.get(rule.get('operator', '<='))
            # The spec: violated when `a OP b` is false (so a NaN violates); an unknown operator never.
            violated = holds is not None and not holds(float(a), float(b))
        else:
            violated = False
        if violated:
            penalty -= rule.get('penalty', 3)
    return penalty


# ---------------------------------------------------------------------------------------------
# Tools.


def as_index(key):
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key
    if isinstance(key, str):
        try:
            return int(key)
        except ValueError:
            return None
    return None


def looked_up(result, key):
    if isinstance(result, dict):
        return result.get(key) if isinstance(key, str) else None
    if isinstance(result, list):
        index = as_index(key)
        if index is not None and -len(result) <= index < len(result):
            return result[index]
        for item in result:
            if isinstance(item, dict) and isinstance(key, str) and key in item:
                return item[key]
    return None


def tool_score(config, calls):
    expected_tools = config.get('expected_tools', [])
    constraints = config.get('param_constraints', {})
    dependencies = config.get('dependencies', [])
    if not expected_tools and not constraints and not dependencies:
        return 1.0
    if not calls:
        return None
    parts = []
    if expected_tools:
        called = {call['name'] for call in calls}
        parts.append(len(called & set(expected_tools)) / len(expected_tools))
    if constraints:
        checks = valid = 0
        for call in calls:
            if call['name'] not in constraints:
                continue
            for param, allowed in constraints[call['name']].items():
                if param not in call['args']:
                    continue
                checks += 1
                if str(call['args'][param]).lower().strip() in [str(v).lower() for v in allowed]:
                    valid += 1
        parts.append(valid / checks if checks else 0.0)
    if dependencies:
        checks = passed = 0
        last_results = {call['name']: call['result'] for call in calls}
        for dep in dependencies:
            source = dep.get('from_tool', '')
            target = next((call for call in calls if call['name'] == dep.get('to_tool', '')), None)
            if source not in last_results or target is None:
                continue
            checks += 1
            value = looked_up(last_results[source], dep.get('from_field', ''))
            argument = target['args'].get(dep.get('to_param', ''))
            if value is not None and str(value).lower() == str(argument or '').lower():
                passed += 1
        parts.append(passed / checks if checks else 0.0)
    return sum(parts) / len(parts)


# ---------------------------------------------------------------------------------------------
# The score.


def score(spec, output, expected, calls):
    if isinstance(output, str):
        output = parse_output(output)
    fields = spec.get('output_fields', {})
    structure_weight = spec.get('structure_weight', 20)
    tools = tool_score(spec.get('tool_config', {}), calls)
    tool_weight = spec.get('tool_usage_weight', 0)
    dims = {}
    if isinstance(output, dict) and isinstance(expected, dict):
        present = total = 0
        for name, config in fields.items():
            importance = IMPORTANCE.get(config.get('importance', 'important'), 2)
            total += importance
            value = output.get(name)
            if value is not None and value != '':
                present += importance
        dims['structure'] = present / max(total, 1) * structure_weight
        for name, config in fields.items():
            points = score_field(output.get(name), expected.get(name), config)
            if points is not None:
                dims[field_key(name)] = points
        errors = sum(1 for name, config in fields.items() if output.get(name) is not None and type_error(output[name], config))
        dims['type_penalty'] = max(-10.0, -2.0 * errors)
        dims['consistency_penalty'] = consistency_penalty(fields, spec.get('consistency_rules', []), output)
        if tools is not None:
            dims['tool_usage'] = tools * tool_weight
        return max(0.0, sum(dims.values())), dims
    dims['structure'] = float(structure_weight) if text_of(output) else 0.0
    weight = sum(config.get('weight', 0) for config in fields.values()) or 100
    key = field_key(next(iter(fields))) if fields else 'text_similarity'
    if text_of(expected):
        dims[key] = sim(output, expected) * weight
    else:
        dims[key] = float(weight) if text_of(output) else 0.0
    if tools is not None:
        dims['tool_usage'] = tools * tool_weight
    return max(0.0, min(100.0, sum(dims.values()))), dims


# ---------------------------------------------------------------------------------------------
# Cases: the spec's rules, one or a few per case.

TICKET = {
    'category': {'type': 'enum', 'values': ['billing', 'technical', 'account'], 'weight': 20, 'importance': 'critical'},
    'priority': {'type': 'number', 'weight': 15, 'tolerance': 10},
    'urgent': {'type': 'boolean', 'weight': 10, 'importance': 'minor'},
    'summary': {'type': 'text', 'weight': 15, 'eval_mode': 'similarity'},
}
TICKET_EXPECTED = {'category': 'billing', 'priority': 80, 'urgent': True, 'summary': 'Customer was charged twice for the May invoice'}


def spec_of(fields, **rest):
    return {'output_fields': fields, **rest}


def enum_field(weight, **rest):
    return {'type': 'enum', 'values': ['Low', 'Medium', 'High'], 'weight': weight, **rest}


def ordering(a, b, operator=None, penalty=None):
    rule = {'field_a': a, 'field_b': b, 'type': 'ordering'}
    if operator is not None:
        rule['operator'] = operator
    if penalty is not None:
        rule['penalty'] = penalty
    return rule


def call(name, args=None, result=None):
    return {'name': name, 'args': args or {}, 'result': result}


NUMBERS = {'a': {'type': 'number', 'weight': 0}, 'b': {'type': 'number', 'weight': 0}}
RISK = {
    'score': {'type': 'number', 'weight': 10, 'range': [0, 100]},
    'risk': {'type': 'enum', 'values': ['low', 'medium', 'high'], 'weight': 10},
}
ANSWER = {'answer': {'type': 'text', 'weight': 60}}


def spec_cases():
    c = []

    def case(name, spec, output, expected, tool_calls=None):
        c.append({'name': name, 'spec': spec, 'output': output, 'expected_output': expected, 'tool_calls': tool_calls})

    # Whole outputs.
    case('a perfect ticket scores every weight', spec_of(TICKET), dict(TICKET_EXPECTED), TICKET_EXPECTED)
    case('a ticket with a wrong category, a near priority and a reworded summary', spec_of(TICKET),
         {'category': 'technical', 'priority': 95, 'urgent': True, 'summary': 'The customer got charged twice'}, TICKET_EXPECTED)
    case('an empty object output scores only what missing values match', spec_of(TICKET), {}, TICKET_EXPECTED)
    case('no output fields: structure 0 and nothing else', spec_of({}), {'anything': 1}, {'anything': 1})

    # Structure.
    fields = {
        'c': {'type': 'enum', 'values': ['x'], 'weight': 0, 'importance': 'critical'},
        'i': {'type': 'number', 'weight': 0, 'importance': 'important'},
        'm': {'type': 'boolean', 'weight': 0, 'importance': 'minor'},
        'u': {'type': 'text', 'weight': 0, 'importance': 'unknown'},
        'n': {'type': 'text', 'weight': 0},
        'o': {'type': 'list', 'weight': 5, 'importance': 'critical'},
    }
    case('structure weighs importance; 0 and false are present, null and "" are not', spec_of(fields, structure_weight=30),
         {'c': None, 'i': 0, 'm': False, 'u': '', 'n': '   ', 'o': []}, {})
    case('structure counts a field of an unknown type, which gets no score key', spec_of(fields),
         {'c': 'x', 'i': 1, 'm': True, 'u': 'a', 'n': 'b', 'o': [1]}, {})

    # Enum.
    case('enum compares lowered and stripped text', spec_of({'level': enum_field(10)}), {'level': '  HIGH '}, {'level': 'high'})
    case('enum mismatch without partial credit scores 0', spec_of({'level': enum_field(10)}), {'level': 'Low'}, {'level': 'High'})
    case('enum partial score by default rounds 0.2 x 12.5 = 2.5 half to even', spec_of({'level': enum_field(12.5, partial_credit=True)}),
         {'level': 'low'}, {'level': 'High'})
    case('enum partial score of weight 2.5 rounds 0.5 to 0, then at least 1', spec_of({'level': enum_field(2.5, partial_credit=True)}),
         {'level': 'Medium'}, {'level': 'High'})
    case('enum partial score of weight 17.5 rounds 3.5 to 4', spec_of({'level': enum_field(17.5, partial_credit=True)}),
         {'level': 'Medium'}, {'level': 'High'})
    case('enum partial score of weight 7.5 rounds 1.5 to 2', spec_of({'level': enum_field(7.5, partial_credit=True)}),
         {'level': 'Medium'}, {'level': 'High'})
    case('enum partial_score given is not capped at the weight', spec_of({'level': enum_field(5, partial_credit=True, partial_score=8)}),
         {'level': 'Medium'}, {'level': 'High'})
    case('enum partial credit needs the value among values', spec_of({'level': enum_field(10, partial_credit=True)}),
         {'level': 'Extreme'}, {'level': 'High'})
    case('enum partial_credit is read for its truthiness', spec_of({'a': enum_field(10, partial_credit='yes'), 'b': enum_field(10, partial_credit=0)}),
         {'a': 'Low', 'b': 'Low'}, {'a': 'High', 'b': 'High'})
    case('enum both missing compare as "" == ""', spec_of({'level': enum_field(10)}), {}, {})
    case('enum "" matches a null expected', spec_of({'level': enum_field(10)}), {'level': ''}, {'level': None})
    case('enum equal to expected but outside values: full weight and a type error', spec_of({'level': enum_field(10)}),
         {'level': 'critical'}, {'level': 'Critical'})
    case('enum 0 reads as "" (matches a missing expected) yet "0" is a type error', spec_of({'level': enum_field(10)}), {'level': 0}, {})
    case('enum with empty values: every value is a type error', spec_of({'level': {'type': 'enum', 'values': [], 'weight': 4}}),
         {'level': 'x'}, {'level': 'x'})
    case('enum true reads as "true"', spec_of({'flag': {'type': 'enum', 'values': ['true', 'false'], 'weight': 6}}),
         {'flag': True}, {'flag': 'TRUE'})
    case('enum Unicode lowering (final sigma, sharp s kept)', spec_of({'word': {'type': 'enum', 'values': ['ΟΔΟΣ', 'Straße'], 'weight': 3}}),
         {'word': 'ΟΔΟΣ'}, {'word': 'οδος'})

    # Number.
    number = {'n': {'type': 'number', 'weight': 10}}
    case('number within the default tolerance 10', spec_of(number), {'n': 60}, {'n': 70})
    case('number within twice the tolerance: half', spec_of(number), {'n': 50}, {'n': 70})
    case('number beyond twice the tolerance: 0', spec_of(number), {'n': 49.5}, {'n': 70})
    case('number tolerance 0 needs equality', spec_of({'n': {'type': 'number', 'weight': 10, 'tolerance': 0}}), {'n': 3.5}, {'n': 3.5})
    case('number strings convert, with whitespace and exponents', spec_of({'a': {'type': 'number', 'weight': 4}, 'b': {'type': 'number', 'weight': 4}}),
         {'a': ' 85 ', 'b': '1e2'}, {'a': 85, 'b': '100'})
    case('number "" and [] read as 0 (matching 0 or missing) yet are type errors',
         spec_of({'a': {'type': 'number', 'weight': 4}, 'b': {'type': 'number', 'weight': 4}}), {'a': '', 'b': []}, {'a': 0})
    case('number strings as Python float reads them: underscores, signs, bare points, infinity',
         spec_of({k: {'type': 'number', 'weight': 2} for k in ('a', 'b', 'c', 'd', 'e')}),
         {'a': '1_000', 'b': ' +.5e1 ', 'c': '5.', 'd': 'INFINITY', 'e': '0x10'}, {'a': 1000, 'b': 5, 'c': 5, 'd': 1e308, 'e': 16})
    case('number that does not convert scores 0 and is a type error', spec_of(number), {'n': 'eighty'}, {'n': 80})
    case('number an object does not convert', spec_of(number), {'n': {'v': 1}}, {'n': 1})
    case('number true reads as 1.0, no type error', spec_of(number), {'n': True}, {'n': 5})
    case('number missing expected reads as 0', spec_of(number), {'n': 9}, {})
    case('number "nan" converts (no type error) and compares false', spec_of(number), {'n': 'nan'}, {'n': 1})
    case('number "inf" converts and is far from anything finite', spec_of(number), {'n': '-Infinity'}, {'n': 1})
    bands = {'n': {'type': 'number', 'weight': 20, 'tolerance_bands': [{'within': 10, 'score_pct': 0.5}, {'within': 2, 'score_pct': 1.0}, {'within': 5, 'score_pct': 0.8}]}}
    case('number bands are taken in ascending within: inside the first', spec_of(bands), {'n': 101.5}, {'n': 100})
    case('number bands: the middle band', spec_of(bands), {'n': 96}, {'n': 100})
    case('number bands: the widest band', spec_of(bands), {'n': 110}, {'n': 100})
    case('number bands: outside every band scores 0 (no tolerance fallback)', spec_of(bands), {'n': 111}, {'n': 100})

    # Boolean.
    flags = {name: {'type': 'boolean', 'weight': 5} for name in ('a', 'b', 'c', 'd', 'e', 'f')}
    case('boolean 1 == true and 0 == false; both missing equal', spec_of(flags), {'a': 1, 'b': 0, 'c': True}, {'a': True, 'b': False, 'c': True})
    case('boolean "true" is not true, and 2 is a type error', spec_of(flags),
         {'a': 'true', 'b': 2, 'c': 1.5, 'd': None, 'e': False}, {'a': True, 'b': True, 'c': True, 'd': None, 'f': None})
    case('boolean lists compare as Python lists ([1] == [true])', spec_of({'a': {'type': 'boolean', 'weight': 5}}), {'a': [1, {'k': 0}]}, {'a': [True, {'k': False}]})

    # Text.
    text_modes = {
        'plain': {'type': 'text', 'weight': 10},
        'skipped': {'type': 'text', 'weight': 10, 'eval_mode': 'skip'},
        'odd': {'type': 'text', 'weight': 10, 'eval_mode': 'vibes'},
    }
    case('text non_empty, skip and an unknown mode', spec_of(text_modes), {'plain': 'ok', 'skipped': 'x', 'odd': 'x'}, {})
    case('text whitespace-only is present yet empty for non_empty', spec_of({'plain': {'type': 'text', 'weight': 10}}), {'plain': ' \t\n'}, {})
    case('text 0 is empty for non_empty and a type error', spec_of({'plain': {'type': 'text', 'weight': 10}}), {'plain': 0}, {})
    similar = {'s': {'type': 'text', 'weight': 20, 'eval_mode': 'similarity'}}
    judged = {'s': {'type': 'text', 'weight': 20, 'eval_mode': 'llm_judge'}}
    case('text similarity: coverage and Jaccard', spec_of(similar), {'s': 'the quick brown fox'}, {'s': 'a quick brown dog'})
    case('text llm_judge falls back to similarity', spec_of(judged), {'s': 'the quick brown fox'}, {'s': 'a quick brown dog'})
    case('text similarity short answer: length factor r / 0.3', spec_of(similar), {'s': 'refund'}, {'s': 'refund issued to the original card'})
    case('text similarity long answer: length factor 1 - 0.1 (r - 3)', spec_of(similar),
         {'s': 'refund issued ' + 'and then some more words about it ' * 2}, {'s': 'refund issued'})
    case('text similarity very long answer: length factor floors at 0.5', spec_of(similar), {'s': 'yes ' * 60}, {'s': 'yes'})
    case('text similarity: expected without tokens', spec_of(similar), {'s': 'anything'}, {'s': '!!!'})
    case('text similarity: neither has tokens', spec_of(similar), {'s': '???'}, {'s': '!!!'})
    case('text similarity: both missing is 1', spec_of(similar), {}, {})
    case('text similarity: output missing is 0', spec_of(similar), {}, {'s': 'x'})
    case('text similarity: expected missing is 1', spec_of(similar), {'s': 'x'}, {})
    case('text similarity: Unicode word tokens (café, naïve, 東京, snake_case)', spec_of(similar),
         {'s': 'Café naïve 東京 snake_case'}, {'s': 'the café, naive tokyo: 東京 snake_case!'})
    case('text similarity: lengths in code points, Unicode whitespace stripped', spec_of(similar),
         {'s': '\u00a0\u2003😀😀 ok\u3000'}, {'s': 'ok fine then really.'})
    case('text non_empty strips as Python does: U+FEFF is kept, U+001C..U+001F and U+0085 are whitespace',
         spec_of({'a': {'type': 'text', 'weight': 3}, 'b': {'type': 'text', 'weight': 4}}), {'a': '\ufeff', 'b': '\x1c\x1f\x85'}, {})
    case('text similarity of a list: Python str() and its length', spec_of(similar),
         {'s': [1, 'a', None, True, 2.5]}, {'s': "[1, 'a', None, True, 2.5]"})
    case('text similarity of an object: Python str() with quotes chosen as repr does', spec_of(similar),
         {'s': {'k': "it's", 'n': None, 'f': 0.30000000000000004, 'e': 1e-05, 'g': 1.5e16}}, {'s': 'k n f e g'})
    floats = {name: {'type': 'text', 'weight': 10, 'eval_mode': 'similarity'} for name in ('big', 'negative', 'small', 'plain')}
    case('text similarity of numbers read with Python str: 1e16 as an integer, 1e-07, -0.5, 123.25', spec_of(floats),
         {'big': 1e16, 'negative': -0.5, 'small': 1e-07, 'plain': 123.25},
         {'big': '10000000000000000 units', 'negative': 'minus 0.5', 'small': '1e-07', 'plain': '123.25 and 1'})
    kwf = {'k': {'type': 'text', 'weight': 10, 'eval_mode': 'keyword_coverage'}}
    case('text keyword coverage: keywords found as substrings, stopwords left out', spec_of(kwf),
         {'k': 'Refunded the duplicated charges yesterday'}, {'k': 'The refund of the duplicate charge was issued'})
    case('text keyword coverage: only stopwords is 1', spec_of(kwf), {'k': 'whatever'}, {'k': 'it is what it was'})
    case('text keyword coverage: expected empty, output not', spec_of(kwf), {'k': 'x'}, {'k': '  '})
    case('text keyword coverage: output empty', spec_of(kwf), {'k': ''}, {'k': 'refund'})

    # Type penalty.
    many = {f'n{i}': {'type': 'number', 'weight': 1} for i in range(6)}
    case('six type errors are capped at -10', spec_of(many), {f'n{i}': 'x' for i in range(6)}, {})
    case('type penalty counts only non-null values', spec_of(many), {'n0': 'x', 'n1': None, 'n2': 'y'}, {})

    # Consistency.
    case('inferred correlation: high number with the worst enum', spec_of(RISK), {'score': 90, 'risk': 'high'}, {'score': 90, 'risk': 'high'})
    case('inferred correlation: low number with the best enum', spec_of(RISK), {'score': 10, 'risk': 'LOW '}, {'score': 10, 'risk': 'low'})
    case('inferred correlation: agreeing values are not penalised', spec_of(RISK), {'score': 90, 'risk': 'low'}, {'score': 90, 'risk': 'low'})
    case('inferred correlation: middle values are not penalised', spec_of(RISK), {'score': 50, 'risk': 'medium'}, {})
    case('inferred rules for every number x enum pair',
         spec_of({'s1': {'type': 'number', 'weight': 0}, 's2': {'type': 'number', 'weight': 0},
                  'e1': {'type': 'enum', 'values': ['best', 'worst'], 'weight': 0}, 'e2': {'type': 'enum', 'values': ['good', 'mid', 'bad'], 'weight': 0}}),
         {'s1': 95, 's2': '99', 'e1': 'worst', 'e2': 'bad'}, {})
    case('explicit correlation with a range and a penalty',
         spec_of({'score': {'type': 'number', 'weight': 0, 'range': [1, 5]}, 'risk': RISK['risk']},
                 consistency_rules=[{'field_a': 'score', 'field_b': 'risk', 'penalty': 5}]),
         {'score': 4.5, 'risk': 'high'}, {})
    case('correlation skipped: enum with one value, value outside values, number not converting',
         spec_of({'a': {'type': 'number', 'weight': 0}, 'one': {'type': 'enum', 'values': ['only'], 'weight': 0},
                  'b': {'type': 'number', 'weight': 0}, 'e': {'type': 'enum', 'values': ['low', 'high'], 'weight': 0}},
                 consistency_rules=[{'field_a': 'a', 'field_b': 'one'}, {'field_a': 'a', 'field_b': 'e'}, {'field_a': 'b', 'field_b': 'e'}]),
         {'a': 99, 'one': 'only', 'e': 'other', 'b': 'n/a'}, {})
    case('correlation fires only for a number field_a and an enum field_b',
         spec_of(RISK, consistency_rules=[{'field_a': 'risk', 'field_b': 'score'}]), {'score': 99, 'risk': 'high'}, {})
    case('correlation skipped when a value is null', spec_of(RISK), {'score': None, 'risk': 'high'}, {})
    for operator, a, b in (('<=', 5, 3), ('<=', 3, 3), ('<', 3, 3), ('<', 2, 3), ('>=', 2, 3), ('>=', 3, 3), ('>', 3, 3), ('>', 4, 3)):
        case(f'ordering {a} {operator} {b}', spec_of(NUMBERS, consistency_rules=[ordering('a', 'b', operator)]), {'a': a, 'b': b}, {})
    case('ordering defaults to <= and 3 points', spec_of(NUMBERS, consistency_rules=[ordering('a', 'b')]), {'a': 9, 'b': 1}, {})
    case('ordering with a penalty of its own, on keys outside output_fields',
         spec_of({}, consistency_rules=[ordering('low', 'high', '<', 7.5)]), {'low': '10', 'high': 2}, {})
    case('ordering skipped when a value does not convert or is null',
         spec_of(NUMBERS, consistency_rules=[ordering('a', 'b'), ordering('b', 'a'), ordering('a', 'c')]), {'a': 'x', 'b': 1, 'c': None}, {})
    case('ordering with a NaN is violated (a comparison with NaN is false)', spec_of(NUMBERS, consistency_rules=[ordering('a', 'b', '>=')]),
         {'a': 'NaN', 'b': 1}, {})
    case('ordering with an unknown operator is never violated', spec_of(NUMBERS, consistency_rules=[ordering('a', 'b', '==')]), {'a': 1, 'b': 2}, {})
    case('explicit rules replace the inferred ones', spec_of(RISK, consistency_rules=[ordering('score', 'cap')]),
         {'score': 90, 'risk': 'high', 'cap': 95}, {})
    case('penalties add up and the total does not go below 0',
         spec_of(NUMBERS, structure_weight=4, consistency_rules=[ordering('a', 'b'), ordering('a', 'b', '<', 2)]), {'a': 5, 'b': 1}, {})

    # Tools.
    tooled = {'answer': {'type': 'text', 'weight': 50}}
    case('an empty tool config gives the tool weight for free, without a trace', spec_of(tooled, tool_usage_weight=10), {'answer': 'x'}, {}, None)
    case('an empty tool config gives the tool weight for free, with a trace', spec_of(tooled, tool_usage_weight=10, tool_config={}),
         {'answer': 'x'}, {}, [call('lookup')])
    case('tool_usage_weight absent is 0', spec_of(tooled), {'answer': 'x'}, {}, [call('lookup')])
    asks = {'expected_tools': ['search', 'fetch', 'summarize']}
    case('tools asked for and no trace: tool usage left out', spec_of(tooled, tool_usage_weight=10, tool_config=asks), {'answer': 'x'}, {}, None)
    case('tools asked for and a trace without calls: left out', spec_of(tooled, tool_usage_weight=10, tool_config=asks), {'answer': 'x'}, {}, [])
    case('completeness: distinct called names among the expected', spec_of(tooled, tool_usage_weight=10, tool_config=asks),
         {'answer': 'x'}, {}, [call('search'), call('search'), call('translate')])
    case('completeness divides by the expected list as given (duplicates count)',
         spec_of(tooled, tool_usage_weight=12, tool_config={'expected_tools': ['search', 'search', 'fetch']}),
         {'answer': 'x'}, {}, [call('search'), call('fetch')])
    constraints = {'param_constraints': {'search': {'mode': ['Fast', 'slow'], 'lang': ['en', 1]}}}
    case('arguments: the share of constrained parameters passed with an allowed value',
         spec_of(tooled, tool_usage_weight=10, tool_config=constraints), {'answer': 'x'}, {},
         [call('search', {'mode': ' FAST ', 'lang': 'de'}), call('search', {'mode': 'slow', 'q': 'x'}), call('search', {'lang': 1}),
          call('fetch', {'mode': 'none'})])
    case('arguments: nothing to check is 0', spec_of(tooled, tool_usage_weight=10, tool_config=constraints), {'answer': 'x'}, {},
         [call('search', {'q': 'x'}), call('fetch', {'mode': 'Fast'})])
    case('arguments: values read with Python str (None, True, 2.5)',
         spec_of(tooled, tool_usage_weight=9, tool_config={'param_constraints': {'t': {'a': ['none'], 'b': ['TRUE'], 'c': ['2.5'], 'd': ['[1, 2]']}}}),
         {'answer': 'x'}, {}, [call('t', {'a': None, 'b': True, 'c': 2.5, 'd': [1, 2]})])
    chain = {'dependencies': [{'from_tool': 'lookup', 'from_field': 'id', 'to_tool': 'fetch', 'to_param': 'record'}]}
    case('chaining: a dict result field passed on (compared lowered)', spec_of(tooled, tool_usage_weight=10, tool_config=chain),
         {'answer': 'x'}, {}, [call('lookup', result={'id': 'ABC-1'}), call('fetch', {'record': 'abc-1'})])
    case('chaining: the last call of from_tool and the first of to_tool', spec_of(tooled, tool_usage_weight=10, tool_config=chain),
         {'answer': 'x'}, {},
         [call('lookup', result={'id': 'old'}), call('fetch', {'record': 'old'}), call('lookup', result={'id': 'new'}), call('fetch', {'record': 'new'})])
    case('chaining: both values 0 fail (the argument 0 reads as empty)', spec_of(tooled, tool_usage_weight=10, tool_config=chain),
         {'answer': 'x'}, {}, [call('lookup', result={'id': 0}), call('fetch', {'record': 0})])
    case('chaining: a null result value fails', spec_of(tooled, tool_usage_weight=10, tool_config=chain),
         {'answer': 'x'}, {}, [call('lookup', result={'id': None}), call('fetch', {'record': ''})])
    case('chaining: Python str of a float and a boolean', spec_of(tooled, tool_usage_weight=10, tool_config={'dependencies': [
        {'from_tool': 'a', 'from_field': 'x', 'to_tool': 'b', 'to_param': 'x'}, {'from_tool': 'a', 'from_field': 'y', 'to_tool': 'b', 'to_param': 'y'},
        {'from_tool': 'a', 'from_field': 'z', 'to_tool': 'b', 'to_param': 'z'}]}),
         {'answer': 'x'}, {}, [call('a', result={'x': 2.5, 'y': True, 'z': 3}), call('b', {'x': '2.5', 'y': 'true', 'z': 3.5})])
    list_deps = {'dependencies': [
        {'from_tool': 'list', 'from_field': '1', 'to_tool': 'use', 'to_param': 'second'},
        {'from_tool': 'list', 'from_field': -1, 'to_tool': 'use', 'to_param': 'last'},
        {'from_tool': 'rows', 'from_field': 'id', 'to_tool': 'use', 'to_param': 'id'},
        {'from_tool': 'list', 'from_field': '7', 'to_tool': 'use', 'to_param': 'missing'},
    ]}
    case('chaining on list results: an integer index, or the first item with the key', spec_of(tooled, tool_usage_weight=10, tool_config=list_deps),
         {'answer': 'x'}, {},
         [call('list', result=['a', 'b', 'c']), call('rows', result=[{'name': 'n'}, {'id': 'R2'}, {'id': 'R3'}]),
          call('use', {'second': 'B', 'last': 'c', 'id': 'r2', 'missing': 'x'})])
    case('chaining: a dependency whose tools were not both called is not checked (nothing left: 0)',
         spec_of(tooled, tool_usage_weight=10, tool_config={'dependencies': chain['dependencies'] + [
             {'from_tool': 'ghost', 'from_field': 'id', 'to_tool': 'fetch', 'to_param': 'record'}]}),
         {'answer': 'x'}, {}, [call('lookup', result={'id': 'x'})])
    case('tool score: the mean of completeness, arguments and chaining',
         spec_of(tooled, tool_usage_weight=15, tool_config={'expected_tools': ['lookup', 'fetch', 'notify'], **constraints, **chain}),
         {'answer': 'x'}, {},
         [call('lookup', result={'id': 7}), call('search', {'mode': 'fast', 'lang': 'fr'}), call('fetch', {'record': '7'})])

    # Python's float() of text, and settings given as booleans.
    case('float() reads digits of any script and non-ASCII whitespace around them (Arabic-Indic, fullwidth, U+0085)',
         spec_of({'a': {'type': 'number', 'weight': 10}, 'b': {'type': 'number', 'weight': 10}, 'c': {'type': 'number', 'weight': 10}}),
         {'a': '\u0663', 'b': '\uff11\uff12.5', 'c': '\x857'}, {'a': 3, 'b': 12.5, 'c': 7})
    case('float() refuses U+001C..U+001F and U+FEFF around a number, which strip() treats apart',
         spec_of({'a': {'type': 'number', 'weight': 10}, 'b': {'type': 'number', 'weight': 10}}),
         {'a': '1\x1c', 'b': '\ufeff1'}, {'a': 1, 'b': 1})
    case('ordering with digits of another script', spec_of(NUMBERS, consistency_rules=[ordering('a', 'b')]), {'a': '\u0669', 'b': 3}, {})
    case('settings given as booleans are 1 and 0, as Python reads them',
         spec_of({'e': {'type': 'enum', 'values': ['x', 'y'], 'weight': True, 'partial_credit': True, 'partial_score': True},
                  'n': {'type': 'number', 'weight': 10, 'tolerance': True},
                  'm': {'type': 'number', 'weight': 10, 'tolerance_bands': [{'within': True, 'score_pct': True}]}},
                 structure_weight=True, consistency_rules=[ordering('lo', 'hi', '<=', True)]),
         {'e': 'y', 'n': 4, 'm': 2, 'lo': 5, 'hi': 1}, {'e': 'x', 'n': 3, 'm': 1})

    # The text path.
    case('text path: string output and expected, the first field names the score', spec_of(ANSWER),
         'The invoice was paid twice.', 'The May invoice was paid twice by mistake.')
    case('text path: no fields names the score text_similarity, weight 100', spec_of({}, structure_weight=0), 'paid twice', 'paid twice')
    case('text path: the total is clamped at 100', spec_of({}, tool_usage_weight=10), 'paid twice', 'paid twice', None)
    case('text path: empty expected gives the weight to any output', spec_of(ANSWER), 'anything', '')
    case('text path: empty expected and empty output score 0', spec_of(ANSWER), '   ', None)
    case('text path: an empty output scores 0', spec_of(ANSWER), '', 'something')
    case('text path: an object output against a string expected, as Python writes it', spec_of(ANSWER),
         {'answer': 'paid twice', 'ok': True}, "{'answer': 'paid twice', 'ok': True}")
    case('text path: a string output against an object expected', spec_of(ANSWER), 'answer: paid twice', {'answer': 'paid twice'})
    case('text path: an object output without an expected output', spec_of(TICKET), {'category': 'billing'}, None)
    case('text path: field weights summed (any type), tools counted', spec_of(TICKET, tool_usage_weight=5, tool_config={'expected_tools': ['kb']}),
         'Charged twice for May', 'Customer was charged twice for the May invoice', [call('kb'), call('other')])
    case('text path: a first field named structure does not shadow structure', spec_of({'structure': {'type': 'text', 'weight': 40}}),
         'a b c', 'a b d')
    case('text path: a printed number is parsed and read back', spec_of(ANSWER), '42', '42')
    case('text path: an object output against a list expected', spec_of(ANSWER), {'a': [1, None]}, [{'a': [1, None]}])
    case('text path: structure weight 0', spec_of(ANSWER, structure_weight=0), 'x y', 'x z')

    # Output parsing.
    case('parsing: the whole text is JSON', spec_of(TICKET), json.dumps(TICKET_EXPECTED), TICKET_EXPECTED)
    case('parsing: a fenced block after Python whitespace (U+0085) is read; after U+FEFF it is not JSON',
         spec_of({'a': {'type': 'number', 'weight': 10}}), 'see {"a": 1} and ```json\x85{"a": 50}```', {'a': 50})
    case('parsing: a fenced block after U+FEFF is not JSON, so the braces slice is tried and fails too',
         spec_of({'a': {'type': 'number', 'weight': 10}}), 'see {"a": 1} and ```json\ufeff{"a": 50}```', {'a': 50})
    case('parsing: a fenced json block among prose', spec_of(TICKET),
         'Here you go:\n```JSON\n{"category": "billing", "priority": 75}\n```\nAnything else?', TICKET_EXPECTED)
    case('parsing: the slice from the first { to the last }', spec_of(TICKET),
         'Result -> {"category": "account", "urgent": false} (done)', TICKET_EXPECTED)
    case('parsing: trailing commas dropped', spec_of(TICKET), '{"category": "billing", "tags": [1, 2,], "urgent": true,\n}', TICKET_EXPECTED)
    case('parsing: raw newlines inside strings escaped', spec_of(TICKET),
         '{"summary": "Customer was charged\ntwice for the May invoice", "category": "billing"}', TICKET_EXPECTED)
    case('parsing: single quotes turned to double quotes', spec_of(TICKET), "{'category': 'billing', 'priority': 80,}", TICKET_EXPECTED)
    case('parsing: unparseable text stays a string (text path)', spec_of(TICKET), 'category: billing, priority: 80', TICKET_EXPECTED)
    case('parsing: an array slice when the object slice fails', spec_of(ANSWER), 'we got {oops} and [1, 2.5, "x"] here', '[1, 2.5, \'x\']')
    case('parsing: "null" parses to null, an empty output', spec_of(ANSWER), 'null', 'anything')
    case('parsing: a commas-in-strings object is left intact by the repair', spec_of({'s': {'type': 'text', 'weight': 10, 'eval_mode': 'similarity'}}),
         '{"s": "a, ]b", }', {'s': 'a, ]b'})

    # Python semantics and naming.
    case('a field named like a component is reported under field:<name>',
         spec_of({'structure': {'type': 'boolean', 'weight': 5}, 'tool_usage': {'type': 'number', 'weight': 5}, 'field:x': {'type': 'text', 'weight': 1}}),
         {'structure': True, 'tool_usage': 3, 'field:x': 'y'}, {'structure': 1, 'tool_usage': 3})
    return c


# ---------------------------------------------------------------------------------------------
# The simple scorers: each case is one scorer's dimension in [0, 1].


def levenshtein(a, b):
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def json_text(value):
    return value if isinstance(value, str) else json.dumps(value, separators=(',', ':'), ensure_ascii=False)


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=False)


def scorer_value(scorer, output, expected):
    kind = scorer['type']
    if kind == 'exact':
        if isinstance(output, str) and isinstance(expected, str):
            a, e = output, expected
            if scorer.get('trim'):
                a, e = a.strip(), e.strip()
            if scorer.get('case_insensitive'):
                a, e = a.lower(), e.lower()
            return 1.0 if a == e else 0.0
        if isinstance(output, str):
            output = parse_output(output)
        return 1.0 if canonical(output) == canonical(expected) else 0.0
    if kind == 'contains':
        needle = scorer.get('value')
        if needle is None:
            if expected is None:
                return 0.0
            needle = json_text(expected)
        haystack = json_text(output)
        if scorer.get('case_insensitive'):
            needle, haystack = needle.lower(), haystack.lower()
        return 1.0 if needle in haystack else 0.0
    if kind == 'json_fields':
        if isinstance(output, str):
            output = parse_output(output)
        if not isinstance(output, dict) or not isinstance(expected, dict):
            return 0.0
        names = scorer.get('fields', list(expected))
        if not names:
            return 1.0
        equal = sum(1 for name in names if canonical(output.get(name)) == canonical(expected.get(name)))
        return equal / len(names)
    if kind == 'numeric':
        field = scorer.get('field')
        if field is not None:
            output = parse_output(output) if isinstance(output, str) else output
            output = output.get(field) if isinstance(output, dict) else None
            expected = expected.get(field) if isinstance(expected, dict) else expected
        a, e = number_of(output), number_of(expected)
        if a is None or e is None:
            return 0.0
        if a == e:
            return 1.0
        diff = abs(a - e)
        close = diff <= scorer.get('abs_tolerance', 0) or diff <= scorer.get('rel_tolerance', 0) * abs(e)
        return 1.0 if close else 0.0
    if kind == 'similarity':
        if expected is None:
            return 0.0
        a, e = json_text(output), json_text(expected)
        longest = max(len(a), len(e))
        return 1.0 if longest == 0 else 1 - levenshtein(a, e) / longest
    raise ValueError(kind)


DECIMAL = re.compile(r'^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$')


def number_of(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and DECIMAL.match(value):
        return float(value)
    return None


def scorer_cases():
    c = []

    def case(name, scorer, output, expected):
        c.append({'name': name, 'scorer': scorer, 'output': output, 'expected_output': expected})

    case('exact: objects equal whatever the key order', {'type': 'exact'}, {'b': [1, {'y': 2, 'x': None}], 'a': 'z'}, {'a': 'z', 'b': [1, {'x': None, 'y': 2}]})
    case('exact: true is not 1', {'type': 'exact'}, {'a': True}, {'a': 1})
    case('exact: printed JSON is parsed when the expected output is not text', {'type': 'exact'}, '```json\n{"a": [1, 2]}\n```', {'a': [1, 2]})
    case('exact: strings differ by case and spaces', {'type': 'exact'}, ' Paris ', 'paris')
    case('exact: trim and case_insensitive', {'type': 'exact', 'trim': True, 'case_insensitive': True}, ' Paris\n', 'PARIS')
    case('exact: trim alone keeps case', {'type': 'exact', 'trim': True}, ' Paris ', 'paris')
    case('contains: the expected text in the output', {'type': 'contains'}, 'The capital is Paris.', 'Paris')
    case('contains: case-sensitive by default', {'type': 'contains'}, 'the capital is paris', 'Paris')
    case('contains: case_insensitive', {'type': 'contains', 'case_insensitive': True}, 'the capital is paris', 'PARIS')
    case('contains: a given value', {'type': 'contains', 'value': 'refund'}, 'We issued a refund today', 'unrelated')
    case('contains: a non-string output as its JSON text', {'type': 'contains', 'value': '"status":"ok"'}, {'status': 'ok', 'n': 1}, None)
    case('contains: no expected output and no value', {'type': 'contains'}, 'anything', None)
    case('json_fields: the share of expected fields equal', {'type': 'json_fields'}, {'a': 1, 'b': [1, 2], 'c': 'x', 'extra': 0}, {'a': 1, 'b': [1, 2], 'c': 'y', 'd': None})
    case('json_fields: a given field list', {'type': 'json_fields', 'fields': ['a', 'c']}, {'a': 1, 'c': 'y'}, {'a': 1, 'b': 2, 'c': 'x'})
    case('json_fields: printed output text is parsed', {'type': 'json_fields'}, "Answer: {'a': 1, 'b': 2,}", {'a': 1, 'b': 3})
    case('json_fields: a non-object output scores 0', {'type': 'json_fields'}, 'no json here', {'a': 1})
    case('json_fields: no fields to compare is 1', {'type': 'json_fields'}, {'a': 1}, {})
    case('numeric: equal numbers', {'type': 'numeric'}, 42, 42)
    case('numeric: within the absolute tolerance', {'type': 'numeric', 'abs_tolerance': 0.5}, '3.4', 3)
    case('numeric: outside the absolute tolerance', {'type': 'numeric', 'abs_tolerance': 0.5}, 3.6, 3)
    case('numeric: within the relative tolerance', {'type': 'numeric', 'rel_tolerance': 0.01}, 100.9, 100)
    case('numeric: a field of the output', {'type': 'numeric', 'field': 'total', 'abs_tolerance': 0.01}, '{"total": 19.999}', {'total': 20})
    case('numeric: text that is not a number', {'type': 'numeric'}, 'about 42', 42)
    case('similarity: kitten and sitting', {'type': 'similarity'}, 'kitten', 'sitting')
    case('similarity: identical texts', {'type': 'similarity'}, 'same text', 'same text')
    case('similarity: both empty', {'type': 'similarity'}, '', '')
    case('similarity: one empty', {'type': 'similarity'}, '', 'abc')
    case('similarity: a non-string output as its JSON text', {'type': 'similarity'}, {'a': 1}, '{"a":2}')
    case('similarity: accented text in code points', {'type': 'similarity'}, 'café crème', 'cafe creme')
    for entry in c:
        entry['expected'] = None
    return c


# ---------------------------------------------------------------------------------------------


def build():
    spec = []
    for raw in spec_cases():
        entry = as_service_sees(raw)
        total, dims = score(entry['spec'], entry['output'], entry['expected_output'], entry['tool_calls'])
        entry['expected'] = {'total': total, 'dimensions': dims}
        spec.append(entry)
    scorers = []
    for raw in scorer_cases():
        entry = as_service_sees(raw)
        entry['expected'] = scorer_value(entry['scorer'], entry['output'], entry['expected_output'])
        scorers.append(entry)
    names = [entry['name'] for entry in spec + scorers]
    assert len(names) == len(set(names)), 'case names are unique'
    return {'tolerance': {'relative': 1e-9, 'absolute': 1e-12}, 'spec_score': spec, 'scorers': scorers}


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'reference.json')
    text = json.dumps(build(), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + '\n'
    with open(path, 'w', encoding='utf-8') as out:
        out.write(text)
    print(f'wrote {path}', file=sys.stderr)


if __name__ == '__main__':
    main()
