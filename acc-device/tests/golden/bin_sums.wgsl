// bin_sums
@group(0) @binding(0) var<storage, read> p0: array<f32>; // x
@group(0) @binding(1) var<storage, read> p1: array<u32>; // keys
@group(0) @binding(2) var<storage, read_write> p2: array<f32>; // sums
struct Params {
    b0: u32,
    n0: u32,
    b1: u32,
    n1: u32,
    b2: u32,
    n2: u32,
    acc_groups: u32,
}
@group(0) @binding(3) var<storage, read> params: Params;
@group(0) @binding(4) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
struct Locals {
    l1: u64,
    l2: u64,
    l3: u64,
    l4: u64,
    l5: u64,
    l6: u64,
    l0: array<f32, 40>,
}
@group(0) @binding(5) var<storage, read_write> acc_locals: Locals;
@group(0) @binding(6) var<storage, read_write> acc_partials_0: array<f32>;
var<workgroup> acc_shared_1_0: array<f32, 256>;
fn acc_trips32(n: u64) -> u32 {
    if (u32(n >> 32u) != 0u) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }
    return u32(n);
}
fn acc_chunks_of(n: u64) -> u32 {
    let c = (n >> 31u) + select(0lu, 1lu, (u32(n) & 2147483647u) != 0u);
    return acc_trips32(c);
}
fn acc_in_bounds(param: u32, i: u64, len: u32) -> bool {
    if (u32(i >> 32u) == 0u && u32(i) < len) { return true; }
    if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {
        atomicStore(&acc_status[1], param);
        atomicStore(&acc_status[2], u32(i));
        atomicStore(&acc_status[3], len);
        atomicStore(&acc_status[4], u32(i >> 32u));
    }
    return false;
}
@compute @workgroup_size(1)
fn bin_sums_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    if (acc_gid.x != 0u) { return; }
    var l0: array<f32, 40>;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    l1 = acc_locals.l1;
    l2 = acc_locals.l2;
    l3 = acc_locals.l3;
    l4 = acc_locals.l4;
    l5 = acc_locals.l5;
    l6 = acc_locals.l6;
    l0 = acc_locals.l0;
    l1 = 0lu;
    l2 = 40lu;
    { let acc_n1: u32 = acc_trips32(select(0lu, (l2 - l1), (l1 < l2)));
    for (var acc_k1: u32 = 0u; acc_k1 < acc_n1; acc_k1 = acc_k1 + 1u) {
        l3 = l1 + u64(acc_k1) * 1lu;
        l0[select(u32(l3), 4294967295u, u32(l3 >> 32u) != 0u)] = f32(0.0);
    } }
    acc_locals.l1 = l1;
    acc_locals.l2 = l2;
    acc_locals.l3 = l3;
    acc_locals.l4 = l4;
    acc_locals.l5 = l5;
    acc_locals.l6 = l6;
    acc_locals.l0 = l0;
}
@compute @workgroup_size(256)
fn bin_sums_gpu_1(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: array<f32, 40>;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    l1 = acc_locals.l1;
    l2 = acc_locals.l2;
    l3 = acc_locals.l3;
    l4 = acc_locals.l4;
    l5 = acc_locals.l5;
    l6 = acc_locals.l6;
    l0 = acc_locals.l0;
    l4 = 0lu;
    l5 = u64(params.n0);
    for (var acc_e: u32 = 0u; acc_e < 40u; acc_e = acc_e + 1u) { l0[acc_e] = f32(0.0); }
    let acc_stride: u32 = acc_nwg.x * 256u;
    let acc_trips: u64 = select(0lu, (l5 - l4), (l4 < l5));
    let acc_fast = acc_trips == 0lu || (((l4 < u64(params.n0)) && ((l4 + u64(acc_trips - 1lu) * 1lu) < u64(params.n0))) && ((l4 < u64(params.n1)) && ((l4 + u64(acc_trips - 1lu) * 1lu) < u64(params.n1))));
    let acc_trips_g0: u64 = select(0lu, (l5 - l4), (l4 < l5));
    let acc_trips_g: u64 = acc_trips_g0;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_gid.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_stride) {
        l6 = l4 + u64((acc_base_g + u64(acc_k_g))) * 1lu;
        if (acc_fast) {
            l0[select(u32((u64(p1[params.b1 + u32(l6)]) % 40lu)), 4294967295u, u32((u64(p1[params.b1 + u32(l6)]) % 40lu) >> 32u) != 0u)] = (l0[select(u32((u64(p1[params.b1 + u32(l6)]) % 40lu)), 4294967295u, u32((u64(p1[params.b1 + u32(l6)]) % 40lu) >> 32u) != 0u)] + p0[params.b0 + u32(l6)]);
        } else {
            l0[select(u32((u64(p1[params.b1 + select(0u, u32(l6), acc_in_bounds(1u, l6, params.n1))]) % 40lu)), 4294967295u, u32((u64(p1[params.b1 + select(0u, u32(l6), acc_in_bounds(1u, l6, params.n1))]) % 40lu) >> 32u) != 0u)] = (l0[select(u32((u64(p1[params.b1 + select(0u, u32(l6), acc_in_bounds(1u, l6, params.n1))]) % 40lu)), 4294967295u, u32((u64(p1[params.b1 + select(0u, u32(l6), acc_in_bounds(1u, l6, params.n1))]) % 40lu) >> 32u) != 0u)] + p0[params.b0 + select(0u, u32(l6), acc_in_bounds(0u, l6, params.n0))]);
        }
    }
    }
    for (var acc_e: u32 = 0u; acc_e < 40u; acc_e = acc_e + 1u) {
        acc_shared_1_0[acc_lid] = l0[acc_e];
        workgroupBarrier();
        for (var acc_s: u32 = 128u; acc_s > 0u; acc_s = acc_s >> 1u) {
            if (acc_lid < acc_s) { acc_shared_1_0[acc_lid] = (acc_shared_1_0[acc_lid] + acc_shared_1_0[acc_lid + acc_s]); }
            workgroupBarrier();
        }
        if (acc_lid == 0u) { acc_partials_0[acc_wg.x * 40u + acc_e] = acc_shared_1_0[0]; }
        workgroupBarrier();
    }
}
