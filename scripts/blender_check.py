"""What a Blender user sees of our .glb exports, checked against the fixture rules.

Run by scripts/blender_check.sh inside headless Blender:
    blender -b --factory-startup --python scripts/blender_check.py -- WORK [VECTORS_TREES...]
WORK holds what the shell script made: facts/KIND.json (s3rig-mkfixture --facts: the values
the fixture builders write) and x/KIND/ (the extracted trees; GEOM meshes bound with
-o rig=rig-clear-4). Each file is imported with Blender's own glTF importer (the add-on
shipped with Blender, default options), and the scene is compared with the facts:

- GEOM mesh.glb: one mesh object parented to one armature (Armature modifier), the rig's
  bones and parents, the vertices where the fixture puts them (glTF's +Y up becomes
  Blender's +Z up: (x, y, z) -> (x, -z, y)), a vertex group per bone holding the fixture's
  weights (bytes / 255 or floats, a bone named twice summed, over their sum), the rest pose
  being the bind pose, and posing bones moves each vertex by its weights (linear blend of
  the bones' deformations, as Blender's Armature modifier does).
- Granny skeleton.glb / model.glb: an armature with the fixture's bones and hierarchy.
- Granny animation.glb (and the demo's model.glb): an action per glTF animation (track
  group) on the armature, keying the group's bones; the pose Blender evaluates at each row
  of the tracks' samples.csv (Granny's evaluation, as the mount gives it) equals the row:
  within 1e-4 at the keys, and within a loose bound between them, since Blender 3.4's
  importer drops CUBICSPLINE tangents and makes AUTO Bezier handles instead.
- Granny animation_linear.glb: the same checks (its channels are LINEAR or STEP, so
  between keys too within 1e-4 of samples.csv for translations and scales, 2e-4 for
  quaternion components: the keys follow the curve within 0.01 degree); and the world
  position Blender poses the deepest animated bone of each group at, at three times,
  equal within 1e-3 to the one composed from samples.csv (Granny's evaluation, as the
  mount gives it) along its parent chain (rest transforms for bones without a track).
- Turok 1 model.glb: imports, with the triangles the fixture draws.

Every import is also checked for warnings and errors the importer prints. One line per
check ("[       OK ] blender: ..." or "FAIL: ..."), a summary, and exit status 1 on any
failure."""
import csv
import glob
import json
import logging
import math
import os
import sys
import tempfile
import warnings

import bpy
from mathutils import Matrix, Quaternion, Vector

import numpy

# Debian 12's Blender 3.4.1 importer calls numpy.bool, which Debian 12's numpy (1.24) no
# longer has: every mesh import fails without this alias (a packaging fault, not ours).
with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    if not hasattr(numpy, 'bool'):
        numpy.bool = bool

# glTF's frame (+Y up) to Blender's (+Z up), as the importer converts: (x, y, z) -> (x, -z, y)
C = Matrix(((1, 0, 0, 0), (0, 0, -1, 0), (0, 1, 0, 0), (0, 0, 0, 1)))
AT_KEYS = 1e-4         # translation, rotation (quaternion components), scale at the keys

passed = 0
failed = 0


def ok(what):
    global passed
    passed += 1
    print('[       OK ] blender: ' + what)


def bad(what):
    global failed
    failed += 1
    print('FAIL: blender: ' + what)


def check(cond, what, why=''):
    if cond:
        ok(what)
    else:
        bad(what + (': ' + why if why else ''))
    return cond


def import_glb(path, **opts):
    """Imports path into an empty scene; returns (result, what the importer printed)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile(mode='w+') as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            result = bpy.ops.import_scene.gltf(filepath=path, loglevel=logging.WARNING, **opts)
        except RuntimeError as e:
            result = {'ERROR: ' + str(e).strip().splitlines()[-1]}
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        log.seek(0)
        text = log.read()
    return result, text


def import_clean(path, label, **opts):
    """Imports and checks that the importer finished and printed no warning or error."""
    result, text = import_glb(path, **opts)
    noisy = [line for line in text.splitlines()
             if any(w in line for w in ('WARNING', 'Warning', 'ERROR', 'Error', 'Traceback'))]
    good = result == {'FINISHED'} and not noisy
    check(good, label + ': imports without warnings',
          '%s; %s' % (result, ' | '.join(noisy[:5])))
    return result == {'FINISHED'}


def objects(kind):
    return [o for o in bpy.data.objects if o.type == kind]


def trs(t, q, s):
    """glTF translation, rotation (x y z w), scale as a matrix."""
    return (Matrix.Translation(Vector(t)) @ Quaternion((q[3], q[0], q[1], q[2])).to_matrix().to_4x4()
            @ Matrix.Diagonal(Vector(tuple(s) + (1,))))


def hierarchy(bones):
    """{name: parent name or None} of a facts bone list."""
    return {b['name']: bones[b['parent']]['name'] if b['parent'] >= 0 else None for b in bones}


def check_armature(label, arma, bones):
    got = {b.name: b.parent.name if b.parent else None for b in arma.data.bones}
    want = hierarchy(bones)
    check(got == want, '%s: armature %s has the %d bones and parents of the fixture' % (label, arma.name, len(want)),
          'got %s, want %s' % (got, want))


def deform(arma, bone):
    """The bone's deformation in world space: its pose world matrix over its rest one
    (what the Armature modifier applies to a vertex weighted to it)."""
    A = arma.matrix_world
    return A @ arma.pose.bones[bone].matrix @ arma.data.bones[bone].matrix_local.inverted() @ A.inverted()


def rest_is_bind(label, arma, scaled=None):
    """After import the pose bones hold no transform: the pose the file's nodes give is the
    bind pose its inverse bind matrices give (else Blender shows the mesh bent at rest).
    Blender's rest bones hold no scale: the importer moves a bind pose's scale into the
    pose, so a bone of scaled (name: the fixture's scale) may hold that scale (its axes in
    Blender's bone frame) and nothing else."""
    worst, why = 0.0, ''
    for pb in arma.pose.bones:
        basis = pb.matrix_basis
        if scaled and pb.name in scaled:
            t, q, sc = basis.decompose()
            off = max(t.length, 1 - abs(q.w), max(abs(a - b) for a, b in zip(sorted(sc), sorted(scaled[pb.name]))))
        else:
            off = max(abs(x) for row in (basis - Matrix.Identity(4)) for x in row)
        if off > worst:
            worst, why = off, '%s off by %.3g' % (pb.name, off)
    note = ' (but the rig\'s scaled bones, %s, whose scale Blender keeps in the pose)' % ', '.join(sorted(scaled)) \
        if scaled else ''
    check(worst < 1e-5, '%s: the rest pose is the bind pose, pose bones at identity%s' % (label, note), why)


def evaluated(obj):
    """The object's evaluated (deformed) vertices in world space."""
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    m = ev.to_mesh()
    out = [ev.matrix_world @ v.co for v in m.vertices]
    ev.to_mesh_clear()
    return out


# ---- GEOM ----

def geom_weights(facts, v):
    """The fixture's influences of vertex v by bone name: a weight per slot above zero
    (bytes / 255 or floats), a bone named twice summed, divided by their sum."""
    scale = 255.0 if facts['weight_type'] == 'byte' else 1.0
    w = {}
    for slot in range(4):
        x = facts['vertex_weights'][v][slot] / scale
        if x > 0:
            name = facts['hash_names'][facts['vertex_bones'][v][slot]]
            w[name] = w.get(name, 0) + x
    total = sum(w.values())
    return {k: x / total for k, x in w.items()}


def rig_scaled(bones):
    """{name: scale} of the rig's bones whose scale, or an ancestor's, is not 1."""
    out = {b['name']: b['scale'] for b in bones if any(abs(x - 1) > 1e-6 for x in b['scale'])}
    under = set(out)
    for b in bones:
        x = b
        while x['parent'] >= 0:
            x = bones[x['parent']]
            if x['name'] in out:
                under.add(b['name'])
    return out, under


def check_geom(kind, glb, facts):
    label = kind + ' mesh.glb'
    if not import_clean(glb, label):
        return
    meshes, armas = objects('MESH'), objects('ARMATURE')
    if not check(len(meshes) == 1 and len(armas) == 1, label + ': one mesh object and one armature',
                 '%d meshes, %d armatures' % (len(meshes), len(armas))):
        return
    mesh, arma = meshes[0], armas[0]
    check(mesh.parent == arma and any(m.type == 'ARMATURE' and m.object == arma for m in mesh.modifiers),
          label + ': the mesh is parented to the armature and deformed by it')
    rig = facts['rig']['bones']
    check_armature(label, arma, rig)
    scaled, under_scaled = rig_scaled(rig)
    rest_is_bind(label, arma, scaled)
    # the vertices where the fixture puts them (in Blender's frame), as Blender shows them
    # at rest; those weighted to a scaled bone (or one under it) only roughly: Blender's rest
    # bones cannot hold scale, and its pose scale does not give back glTF's matrices
    shown = evaluated(mesh)
    weights = [geom_weights(facts, v) for v in range(len(facts['positions']))]
    match, worst, rough = [], [0.0, 0.0], 0
    for v, p in enumerate(facts['positions']):
        want = C @ Vector(p)
        near = min(range(len(shown)), key=lambda i: (shown[i] - want).length) if shown else None
        scaled_v = bool(set(weights[v]) & under_scaled)
        rough += scaled_v
        if near is None or (shown[near] - want).length > 5e-3:
            match.append(None)
            continue
        match.append(near)
        worst[scaled_v] = max(worst[scaled_v], (shown[near] - want).length)
    if not check(len(shown) == len(facts['positions']) and None not in match and len(set(match)) == len(match),
                 '%s: %d vertices, at the fixture\'s positions' % (label, len(shown)),
                 'vertices %d, not found %s' % (len(shown), [i for i, m in enumerate(match) if m is None])):
        return
    check(worst[0] < 1e-5 and worst[1] < 5e-3,
          '%s: at rest, the %d vertices on unscaled bones within 1e-5 (off %.1e), the %d on scaled bones within 5e-3 '
          '(off %.1e: Blender\'s scale-free rest bones)' % (label, len(shown) - rough, worst[0], rough, worst[1]),
          'off %.3g (unscaled), %.3g (scaled)' % tuple(worst))
    check(len(mesh.data.polygons) == facts['triangles'], label + ': %d triangles' % facts['triangles'],
          '%d faces' % len(mesh.data.polygons))
    # vertex groups: named after the bones, with the fixture's weights
    group_names = {g.name for g in mesh.vertex_groups}
    check(group_names == set(hierarchy(rig)), label + ': a vertex group per bone, named as the bone',
          str(sorted(group_names)))
    worst, why = 0.0, ''
    for v, bi in enumerate(match):
        got = {mesh.vertex_groups[g.group].name: g.weight for g in mesh.data.vertices[bi].groups if g.weight > 0}
        want = weights[v]
        if set(got) != set(want):
            worst, why = 1.0, 'vertex %d: groups %s, want %s' % (v, got, want)
            break
        for k in want:
            if abs(got[k] - want[k]) > worst:
                worst, why = abs(got[k] - want[k]), 'vertex %d, %s: %.7f, want %.7f' % (v, k, got[k], want[k])
    check(worst < 1e-6, label + ': vertex groups hold the fixture\'s weights', why)
    check_deform(label, mesh, arma, match, weights)


def check_deform(label, mesh, arma, match, weights):
    """Poses two bones and compares the evaluated mesh with the linear blend of the bones'
    deformations (Blender's own: pose over rest) by the fixture's weights, applied to the
    mesh's vertices as stored; vertices weighted to no moved bone stay where they were."""
    data = [mesh.matrix_world @ mesh.data.vertices[bi].co for bi in match]
    before = evaluated(mesh)
    spine = next(b.name for b in arma.data.bones if 'Spine' in b.name)
    thigh = next(b.name for b in arma.data.bones if 'L_Thigh' in b.name)
    pb = arma.pose.bones[spine]
    pb.rotation_mode = 'QUATERNION'
    pb.rotation_quaternion = pb.rotation_quaternion @ Quaternion(Vector((0.3, 1, 0.2)).normalized(), 0.6)
    arma.pose.bones[thigh].location = arma.pose.bones[thigh].location + Vector((0.03, -0.02, 0.05))
    bpy.context.view_layer.update()
    after = evaluated(mesh)
    worst, moved, still = 0.0, 0, 0
    moving = {b.name for b in arma.data.bones
              if b.name in (spine, thigh) or any(p.name in (spine, thigh) for p in b.parent_recursive)}
    for v, w in enumerate(weights):
        want = sum((x * (deform(arma, b) @ data[v]) for b, x in w.items()), Vector())
        worst = max(worst, (after[match[v]] - want).length)
        shift = (after[match[v]] - before[match[v]]).length
        if set(w) & moving:
            moved += shift > 1e-3
        else:
            still += shift < 1e-6
    want_moved = sum(1 for w in weights if set(w) & moving)
    check(worst < 1e-5 and moved == want_moved and still == len(weights) - want_moved,
          '%s: posing %s and %s moves the %d vertices weighted to them by their weights, the others stay'
          % (label, spine, thigh, want_moved),
          'off by %.3g; %d of %d moved, %d of %d stayed' % (worst, moved, want_moved, still, len(weights) - want_moved))


# ---- Granny models and skeletons ----

def check_granny_skeleton(label, glb, facts, model):
    if not import_clean(glb, label):
        return
    armas = objects('ARMATURE')
    if not check(len(armas) == 1, label + ': one armature', '%d' % len(armas)):
        return
    check_armature(label, armas[0], facts['bones'])
    if model:
        meshes = objects('MESH')
        check(meshes and all(m.parent == armas[0] and any(x.type == 'ARMATURE' and x.object == armas[0]
                                                           for x in m.modifiers) for m in meshes),
              '%s: its %d meshes deformed by the armature' % (label, len(meshes)))


# ---- Granny animations ----

def read_samples(path):
    with open(path, newline='') as f:
        rows = list(csv.DictReader(f))
    return [{k: float(v) for k, v in r.items()} for r in rows]


def track_samples(tree):
    """{(group name, track name): samples.csv rows} of an extracted Granny tree."""
    out = {}
    for tt in glob.glob(os.path.join(tree, '**', 'TransformTracks', '*', 'samples.csv'), recursive=True):
        track_dir = os.path.dirname(tt)
        group_dir = os.path.dirname(os.path.dirname(track_dir))
        try:
            group = open(os.path.join(group_dir, 'Name')).read().strip()
            track = open(os.path.join(track_dir, 'Name')).read().strip()
        except OSError:
            continue
        out.setdefault((group, track), read_samples(tt))
    return out


class Frame:
    """glTF world matrices of the imported nodes, read back from Blender's scene: a bone's
    from its deformation and the fixture's rest pose (so Blender's bone-axis heuristic
    cancels out), an object's from its world matrix."""

    def __init__(self, arma, bones):
        self.arma = arma
        self.rest = {}
        self.parent = hierarchy(bones) if bones else {}
        base = C.inverted() @ arma.matrix_world @ C if arma else Matrix.Identity(4)
        self.base = base
        for b in bones:
            m, x = Matrix.Identity(4), b
            while True:
                m = trs(x['translation'], x['rotation'], x['scale']) @ m
                if x['parent'] < 0:
                    break
                x = bones[x['parent']]
            self.rest[b['name']] = base @ m

    def world(self, name):
        """name: a bone of the armature, or an object."""
        if self.arma and name in self.rest:
            return C.inverted() @ deform(self.arma, name) @ C @ self.rest[name]
        return C.inverted() @ bpy.data.objects[name].matrix_world @ C

    def local(self, name):
        if self.arma and name in self.rest:
            parent = self.parent[name]
            pw = self.world(parent) if parent else self.base
        else:
            obj = bpy.data.objects[name]
            pw = C.inverted() @ obj.parent.matrix_world @ C if obj.parent else Matrix.Identity(4)
        return pw.inverted() @ self.world(name)


CHANNELS = (('location', 'translation'), ('rotation_quaternion', 'rotation'), ('scale', 'scale'))


def pose_errors(m, row):
    """How far a local matrix is from a samples.csv row: translation, rotation (quaternion
    components, sign aligned), scale (the diagonal)."""
    t, q, s = m.decompose()
    want_q = Quaternion((row['qw'], row['qx'], row['qy'], row['qz']))
    if q.dot(want_q) < 0:
        q = -q
    return (max(abs(a - b) for a, b in zip(t, (row['px'], row['py'], row['pz']))),
            max(abs(a - b) for a, b in zip(q, want_q)),
            max(abs(a - b) for a, b in zip(s, (row['s00'], row['s11'], row['s22']))))


def set_time(t):
    scene = bpy.context.scene
    f = t * scene.render.fps / scene.render.fps_base
    scene.frame_set(int(math.floor(f)), subframe=f - math.floor(f))


def key_times(action, path_of, channel):
    """Key times (seconds) of one channel (location, rotation_quaternion, scale) of one
    node in an action."""
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    return sorted({k.co[0] / fps for fc in action.fcurves if path_of(fc) and fc.data_path.endswith(channel)
                   for k in fc.keyframe_points})


def owner_of(action):
    """The object whose NLA track holds the action."""
    for o in bpy.data.objects:
        if o.animation_data and any(s.action == action for t in o.animation_data.nla_tracks for s in t.strips):
            return o
    return None


def check_anim(label, glb, facts, anim, samples, names, linear=False):
    """anim: the facts' animation; names: the glTF animation name of each group; linear:
    the file is animation_linear.glb (LINEAR keys: close between keys as well, and the
    world position of a posed bone checked)."""
    if not import_clean(glb, label):
        return
    bones = {b['name'] for b in facts['bones']}
    armas = objects('ARMATURE')
    arma = armas[0] if len(armas) == 1 else None
    groups = [g for g in anim['groups'] if g['tracks']]
    on_skel = [g for g in groups if bones and set(g['tracks']) <= bones]
    if on_skel:
        if not check(arma is not None, label + ': an armature for the skeleton\'s bones',
                     '%d armatures; objects: %s' % (len(armas), sorted(o.name for o in bpy.data.objects)[:12])):
            arma = None
    if arma:
        check_armature(label, arma, facts['bones'])
        tracks = sorted(t.name for t in arma.animation_data.nla_tracks) if arma.animation_data else []
        check(tracks == sorted(names[g['name']] for g in on_skel),
              '%s: an action per glTF animation on the armature (%s)' % (label, ', '.join(tracks)),
              'NLA tracks %s' % tracks)
    frame = Frame(arma, facts['bones'] if arma else [])
    for g in groups:
        name = names[g['name']]
        acts = [a for a in bpy.data.actions if a.name.startswith(name + '_')]
        if g in on_skel and arma:
            acts = [a for a in acts if owner_of(a) == arma]
            if not check(len(acts) == 1, '%s: group %s is one action on the armature' % (label, g['name']),
                         str([a.name for a in acts])):
                continue
            keyed = {fc.data_path.split('"')[1] for fc in acts[0].fcurves if fc.data_path.startswith('pose.bones')}
            check(keyed == set(g['tracks']), '%s: action %s keys the bones %s' % (label, acts[0].name,
                                                                                   ', '.join(sorted(keyed))),
                  'keyed %s, want %s' % (sorted(keyed), sorted(g['tracks'])))
            targets = {tr: acts[0] for tr in g['tracks']}
            paths = {tr: (lambda fc, tr=tr: fc.data_path.startswith('pose.bones["%s"]' % tr)) for tr in g['tracks']}
            if linear:
                check_world(label, g, acts[0], samples, frame, facts['bones'], anim['duration'])
        else:
            targets = {}
            for tr in g['tracks']:
                a = [x for x in acts if owner_of(x) and owner_of(x).name.split('.')[0] == tr]  # Blender: root.001
                if a:
                    targets[tr] = a[0]
            check(len(targets) == len(g['tracks']), '%s: group %s animates its %d nodes' % (label, g['name'],
                                                                                           len(g['tracks'])),
                  'actions %s' % [a.name for a in acts])
            paths = {tr: (lambda fc: True) for tr in g['tracks']}
        compare_poses(label, g, targets, paths, samples, frame, anim['duration'], linear)


def row_at(rows, t):
    return next((r for r in rows if abs(r['t'] - t) < 1e-6), None)


def check_world(label, g, action, samples, frame, bones, duration):
    """The deepest animated bone of group g (ties: the first), posed by Blender at three
    samples.csv times (a third, a half and two thirds of its rows): its world position
    against the one composed from samples.csv rows (T R diag(S)) and the rest transforms
    of bones without a track, up its parent chain; within 1e-3."""
    by_name = {b['name']: b for b in bones}

    def chain(name):
        out = []
        while name:
            out.append(name)
            p = by_name[name]['parent']
            name = bones[p]['name'] if p >= 0 else None
        return out
    tracks = [t for t in g['tracks'] if t in by_name and samples.get((g['name'], t))]
    if not check(tracks, '%s: group %s has a bone with samples.csv' % (label, g['name'])):
        return
    bone = max(tracks, key=lambda t: len(chain(t)))
    rows = [r for r in samples[(g['name'], bone)] if r['t'] <= duration + 1e-6]
    owner = owner_of(action)
    owner.animation_data.action = action
    worst, times = 0.0, []
    for r in (rows[len(rows) // 3], rows[len(rows) // 2], rows[2 * len(rows) // 3]):
        t = r['t']
        want = Matrix.Identity(4)
        for name in reversed(chain(bone)):  # root first
            row = row_at(samples.get((g['name'], name), []), t) if name in g['tracks'] else None
            b = by_name[name]
            local = (trs((row['px'], row['py'], row['pz']), (row['qx'], row['qy'], row['qz'], row['qw']),
                         (row['s00'], row['s11'], row['s22'])) if row
                     else trs(b['translation'], b['rotation'], b['scale']))
            want = want @ local
        want = frame.base @ want
        set_time(t)
        got = frame.world(bone).translation
        worst = max(worst, (got - want.translation).length)
        times.append('%.4g' % t)
    owner.animation_data.action = None
    check(worst <= 1e-3, '%s: %s posed at t = %s s where samples.csv puts it (world position off %.1e)'
          % (label, bone, ', '.join(times), worst), 'off by %.3g' % worst)


def interpolations(action, path_of, channel):
    return {k.interpolation for fc in action.fcurves if path_of(fc) and fc.data_path.endswith(channel)
            for k in fc.keyframe_points}


def compare_poses(label, g, targets, paths, samples, frame, duration, linear=False):
    """At every samples.csv row of each track: Blender's evaluated local transform, each
    channel at its own keys (within 1e-4); between keys, channels keyed LINEAR or STEP
    (Blender: LINEAR, CONSTANT) within 1e-4 too (2e-4 for the rotations of linear: the
    sampled keys' 0.01 degree, and Blender interpolates quaternion components linearly),
    CUBICSPLINE ones (Blender: BEZIER with handles of its own, the file's tangents dropped)
    only reported."""
    for tr, action in sorted(targets.items()):
        # samples.csv follows the first animation holding the group: its rows in this one
        rows = [r for r in samples.get((g['name'], tr), []) if r['t'] <= duration + 1e-6]
        if not check(rows, '%s: samples.csv of %s/%s' % (label, g['name'], tr)):
            continue
        owner = owner_of(action)
        node = tr if owner == frame.arma else owner.name
        owner.animation_data.action = action
        keys = [key_times(action, paths[tr], channel) for channel, _ in CHANNELS]
        bezier = ['BEZIER' in interpolations(action, paths[tr], channel) for channel, _ in CHANNELS]
        at_keys, between, n_keys = [0.0] * 3, [0.0] * 3, 0
        for row in rows:
            set_time(row['t'])
            errs = pose_errors(frame.local(node), row)
            for c in range(3):
                if any(abs(row['t'] - k) < 2e-6 for k in keys[c]):
                    at_keys[c] = max(at_keys[c], errs[c])
                    n_keys += 1
                else:
                    between[c] = max(between[c], errs[c])
        owner.animation_data.action = None
        check(n_keys > 0 and max(at_keys) < AT_KEYS,
              '%s: %s/%s posed as samples.csv at the keys (%d channel rows, off %.1e)'
              % (label, g['name'], tr, n_keys, max(at_keys)), 'off at the keys by %.3g' % max(at_keys))
        exact = [between[c] / (2 if linear and c == 1 else 1) for c in range(3) if not bezier[c]]
        smooth = ', '.join('%s %.2g' % (CHANNELS[c][1], between[c]) for c in range(3) if bezier[c])
        check(not (linear and smooth) and max(exact, default=0) < AT_KEYS,
              '%s: %s/%s between keys: LINEAR and STEP channels as samples.csv (off %.1e)%s'
              % (label, g['name'], tr, max(exact, default=0),
                 '; CUBICSPLINE ones as Blender\'s own Bezier handles make them: off ' + smooth if smooth else ''),
              'off by %.3g' % max(exact, default=0))


# ---- Turok 1 ----

def check_turok(label, glb, faces):
    if not import_clean(glb, label):
        return
    meshes = objects('MESH')
    n = sum(len(m.data.polygons) for m in meshes)
    check(meshes and n == faces, '%s: %d mesh objects, %d triangles' % (label, len(meshes), n),
          'want %d triangles' % faces)


# ---- the files ----

def facts_of(work, kind):
    with open(os.path.join(work, 'facts', kind + '.json')) as f:
        return json.load(f)


def granny_root(tree):
    """The extracted tree's object that holds Animations (root, or a member of it)."""
    hits = sorted(glob.glob(os.path.join(tree, 'granny', 'root', '**', 'Animations'), recursive=True), key=len)
    return os.path.dirname(hits[0]) if hits else os.path.join(tree, 'granny', 'root')


def main():
    argv = sys.argv[sys.argv.index('--') + 1:]
    work, vector_trees = argv[0], argv[1:]
    x = os.path.join(work, 'x')
    for v in (5, 12, 13, 14, 15):
        kind = 'geom-v%d' % v
        check_geom(kind, os.path.join(x, kind, 'mesh.glb'), facts_of(work, kind))
    for kind in ('gr2model-le32', 'gr2model-be64-alt', 'gr2model-le32-rough'):
        facts = facts_of(work, kind)
        root = os.path.join(x, kind, 'granny', 'root')
        check_granny_skeleton(kind + ' skeleton.glb', os.path.join(root, 'Skeletons', '0', 'skeleton.glb'), facts, False)
        check_granny_skeleton(kind + ' model.glb', os.path.join(root, 'Models', '0', 'model.glb'), facts, True)
    for kind in ('gr2anim-le32', 'gr2anim-be64', 'gr2anim-le32-old', 'gr2anim-le64-noskel', 'gr2anim-demo'):
        facts = facts_of(work, kind)
        tree = os.path.join(x, kind)
        samples = track_samples(tree)
        root = granny_root(tree)
        for i, anim in enumerate(facts['animations']):
            glb = os.path.join(root, 'Animations', str(i), 'animation.glb')
            label = '%s %s animation.glb' % (kind, anim['name'])
            check_anim(label, glb, facts, anim, samples, {g['name']: g['name'] for g in anim['groups']})
            glb = os.path.join(root, 'Animations', str(i), 'animation_linear.glb')
            label = '%s %s animation_linear.glb' % (kind, anim['name'])
            check_anim(label, glb, facts, anim, samples, {g['name']: g['name'] for g in anim['groups']}, True)
        if kind == 'gr2anim-demo':
            anim = facts['animations'][0]
            check_anim(kind + ' model.glb', os.path.join(root, 'Models', '0', 'model.glb'), facts, anim, samples,
                       {g['name']: anim['name'] for g in anim['groups']})
    # the Turok 1 fixture (fxt_t1_sample): object 0 draws 18 triangles, object 1 4 (the
    # cases' hand-written triangles; tests/gltf/check_exports.sh counts them the same way)
    for kind in ('t2fs-turok1', 't2fs-turok1-be'):
        for obj, faces in ((0, 18), (1, 4)):
            check_turok('%s models/%d model.glb' % (kind, obj), os.path.join(x, kind, 'models', str(obj), 'model.glb'),
                        faces)
    # real Granny files: each model and skeleton imports with its skeleton's bones, in
    # its bind pose (counts from the tree, as check_exports.sh takes them)
    for tree in vector_trees:
        root = os.path.join(tree, 'granny', 'root')
        nbones = len(os.listdir(os.path.join(root, 'Skeletons', '0', 'Bones')))
        for glb in ('Skeletons/0/skeleton.glb', 'Models/0/model.glb'):
            label = '%s %s' % (os.path.basename(tree), glb)
            if not import_clean(os.path.join(root, glb), label):
                continue
            armas = objects('ARMATURE')
            if check(len(armas) == 1 and len(armas[0].data.bones) == nbones,
                     '%s: an armature of %d bones' % (label, nbones), '%s' % [len(a.data.bones) for a in armas]):
                rest_is_bind(label, armas[0])
    print('blender: %d passed, %d failed' % (passed, failed))
    sys.stdout.flush()
    os._exit(1 if failed else 0)


main()
