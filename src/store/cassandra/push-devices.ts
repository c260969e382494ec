/**
 * The push device tables and the PushDeviceStore: `push_devices` (one partition per tenant and
 * endpoint/token: the truth), `push_devices_by_user` (a user's devices in registration order,
 * keys only) and `push_devices_by_endpoint` (every tenant an endpoint is registered in, for
 * pruning). A registration that moves a device to another user rewrites the key rows in one
 * logged batch; listings confirm every key against the device row, so a stale key row (a lost
 * batch) never pushes to the previous user.
 */
import type { PushDevice, PushPlatform } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import { checkPushDevice } from '../inputs.ts';
import type { PushDeviceInput, PushDeviceStore } from '../types-tenant.ts';
import type { Mutation } from './activity.ts';
import { cql, type CassandraHandle, type Row } from './cql.ts';
import { str, strOrNull, time, ts } from './rows.ts';

const COLUMNS = 'tenant_id, token_or_endpoint, user_id, platform, p256dh, auth, created_at, updated_at';
const DEVICE = 'tenant_id = ? AND token_or_endpoint = ?';

export const PUSH_DEVICES_CQL = {
  get: cql(`SELECT ${COLUMNS} FROM push_devices WHERE ${DEVICE}`),
  upsert: cql(`INSERT INTO push_devices (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
  delete: cql(`DELETE FROM push_devices WHERE ${DEVICE}`),
  userInsert: cql('INSERT INTO push_devices_by_user (tenant_id, user_id, created_at, token_or_endpoint) VALUES (?, ?, ?, ?)'),
  userDelete: cql('DELETE FROM push_devices_by_user WHERE tenant_id = ? AND user_id = ? AND created_at = ? AND token_or_endpoint = ?'),
  userList: cql('SELECT created_at, token_or_endpoint FROM push_devices_by_user WHERE tenant_id = ? AND user_id = ?'),
  endpointInsert: cql('INSERT INTO push_devices_by_endpoint (token_or_endpoint, tenant_id) VALUES (?, ?)'),
  endpointDelete: cql('DELETE FROM push_devices_by_endpoint WHERE token_or_endpoint = ? AND tenant_id = ?'),
  endpointList: cql('SELECT tenant_id FROM push_devices_by_endpoint WHERE token_or_endpoint = ?'),
};

function toDevice(row: Row): PushDevice {
  return {
    tenant_id: str(row, 'tenant_id'),
    user_id: str(row, 'user_id'),
    platform: str(row, 'platform') as PushPlatform,
    token_or_endpoint: str(row, 'token_or_endpoint'),
    p256dh: strOrNull(row, 'p256dh'),
    auth: strOrNull(row, 'auth'),
    created_at: time(row, 'created_at'),
    updated_at: time(row, 'updated_at'),
  };
}

function removeRows(d: PushDevice): Mutation[] {
  return [
    [PUSH_DEVICES_CQL.delete, [d.tenant_id, d.token_or_endpoint]],
    [PUSH_DEVICES_CQL.userDelete, [d.tenant_id, d.user_id, ts(d.created_at), d.token_or_endpoint]],
    [PUSH_DEVICES_CQL.endpointDelete, [d.token_or_endpoint, d.tenant_id]],
  ];
}

export class CassandraPushDeviceStore implements PushDeviceStore {
  constructor(private readonly h: CassandraHandle) {}

  async upsert(device: PushDeviceInput, at?: string): Promise<PushDevice> {
    const fields = checkPushDevice(device);
    const when = timestampOrNow(at);
    return this.h.serial(`push:${device.tenant_id}:${device.token_or_endpoint}`, async () => {
      const old = await this.read(device.tenant_id, device.token_or_endpoint);
      const next: PushDevice = { created_at: old?.created_at ?? when, updated_at: when, ...fields };
      const rows: Mutation[] = [
        [PUSH_DEVICES_CQL.upsert, [next.tenant_id, next.token_or_endpoint, next.user_id, next.platform, next.p256dh, next.auth, ts(next.created_at), ts(next.updated_at)]],
        [PUSH_DEVICES_CQL.userInsert, [next.tenant_id, next.user_id, ts(next.created_at), next.token_or_endpoint]],
        [PUSH_DEVICES_CQL.endpointInsert, [next.token_or_endpoint, next.tenant_id]],
      ];
      if (old && old.user_id !== next.user_id) rows.push([PUSH_DEVICES_CQL.userDelete, [old.tenant_id, old.user_id, ts(old.created_at), old.token_or_endpoint]]);
      await this.h.batch(rows);
      return next;
    });
  }

  async delete(tenant_id: string, user_id: string, token_or_endpoint: string): Promise<boolean> {
    return this.h.serial(`push:${tenant_id}:${token_or_endpoint}`, async () => {
      const d = await this.read(tenant_id, token_or_endpoint);
      if (!d || d.user_id !== user_id) return false;
      await this.h.batch(removeRows(d));
      return true;
    });
  }

  async listForUsers(tenant_id: string, user_ids: readonly string[]): Promise<PushDevice[]> {
    const users = [...new Set(user_ids)].sort();
    return this.h.op(async () => {
      const perUser = await Promise.all(
        users.map(async (user_id) => {
          const keys = await this.h.rows(PUSH_DEVICES_CQL.userList, [tenant_id, user_id]);
          const devices = await Promise.all(keys.map((k) => this.read(tenant_id, str(k, 'token_or_endpoint'))));
          return devices.filter((d, i): d is PushDevice => d !== null && d.user_id === user_id && d.created_at === time(keys[i]!, 'created_at'));
        }),
      );
      return perUser.flat();
    });
  }

  async deleteEndpoint(token_or_endpoint: string): Promise<number> {
    return this.h.op(async () => {
      let removed = 0;
      for (const r of await this.h.rows(PUSH_DEVICES_CQL.endpointList, [token_or_endpoint])) {
        const tenant_id = str(r, 'tenant_id');
        const d = await this.read(tenant_id, token_or_endpoint);
        if (d) removed += 1;
        await this.h.batch(d ? removeRows(d) : [[PUSH_DEVICES_CQL.endpointDelete, [token_or_endpoint, tenant_id]]]);
      }
      return removed;
    });
  }

  private async read(tenant_id: string, token_or_endpoint: string): Promise<PushDevice | null> {
    const row = await this.h.row(PUSH_DEVICES_CQL.get, [tenant_id, token_or_endpoint]);
    return row && row.user_id != null ? toDevice(row) : null;
  }
}
