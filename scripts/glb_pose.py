#!/usr/bin/env python3
"""glb_pose.py IN.glb OUT.glb SECONDS: a copy of IN.glb posed as its first animation is at
SECONDS (its channels sampled by the glTF rules: STEP, LINEAR with slerp for rotations,
CUBICSPLINE Hermite with the tangents scaled by the key interval, rotations normalised),
without animations. For viewers that show only the rest pose (scripts/render.sh -t)."""
import json
import math
import struct
import sys


def main():
    src, dst, at = sys.argv[1], sys.argv[2], float(sys.argv[3])
    data = open(src, 'rb').read()
    jlen = struct.unpack('<I', data[12:16])[0]
    doc = json.loads(data[20:20 + jlen])
    binary = data[28 + jlen:]

    def floats(i):
        a = doc['accessors'][i]
        v = doc['bufferViews'][a['bufferView']]
        nc = {'SCALAR': 1, 'VEC3': 3, 'VEC4': 4}[a['type']]
        off = v.get('byteOffset', 0) + a.get('byteOffset', 0)
        return list(struct.unpack('<%df' % (a['count'] * nc), binary[off:off + 4 * a['count'] * nc])), nc

    anims = doc.get('animations', [])
    for ch in anims[0]['channels'] if anims else []:
        smp = anims[0]['samplers'][ch['sampler']]
        t, _ = floats(smp['input'])
        v, nc = floats(smp['output'])
        interp = smp.get('interpolation', 'LINEAR')
        per, mid = (3 * nc, nc) if interp == 'CUBICSPLINE' else (nc, 0)

        def key(i):
            return v[i * per + mid:i * per + mid + nc]

        i = max([k for k in range(len(t)) if t[k] <= at] or [0])
        if at <= t[0] or i >= len(t) - 1:
            out = key(i)
        else:
            td = t[i + 1] - t[i]
            s = (at - t[i]) / td
            a, b = key(i), key(i + 1)
            if interp == 'STEP':
                out = a
            elif interp == 'CUBICSPLINE':
                bo = v[i * per + 2 * nc:i * per + 3 * nc]
                ai = v[(i + 1) * per:(i + 1) * per + nc]
                h = (2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2)
                out = [h[0] * a[j] + td * h[1] * bo[j] + h[2] * b[j] + td * h[3] * ai[j] for j in range(nc)]
            elif ch['target']['path'] == 'rotation':
                dot = sum(x * y for x, y in zip(a, b))
                sign = -1 if dot < 0 else 1
                th = math.acos(min(1.0, abs(dot)))
                if th < 1e-9:
                    wa, wb = 1 - s, s
                else:
                    wa, wb = math.sin((1 - s) * th) / math.sin(th), math.sin(s * th) / math.sin(th)
                out = [wa * x + sign * wb * y for x, y in zip(a, b)]
            else:
                out = [(1 - s) * x + s * y for x, y in zip(a, b)]
        if ch['target']['path'] == 'rotation':
            n = math.sqrt(sum(x * x for x in out))
            out = [x / n for x in out]
        node = doc['nodes'][ch['target']['node']]
        node.pop('matrix', None)
        node[ch['target']['path']] = out
    doc.pop('animations', None)
    js = json.dumps(doc).encode()
    js += b' ' * (-len(js) % 4)
    rest = data[20 + jlen:]
    with open(dst, 'wb') as f:
        f.write(b'glTF' + struct.pack('<III', 2, 20 + len(js) + len(rest), len(js)) + b'JSON' + js + rest)


main()
