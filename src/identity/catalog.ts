/**
 * What the service enforces: the capability keys (Chat permissions) checked on user calls, and
 * the scopes accepted on tokens. The identity provider's catalog defines capabilities; keys the
 * service enforces that the catalog lacks show up as `missing_capabilities` in the admin mapping.
 * docs/authorization.md explains each key and scope.
 */

/** Capabilities held per application (from the user's roles there). */
export const APPLICATION_CAPABILITIES = [
  'conversations.read',
  'conversations.create',
  'groups.create',
  'groups.manage',
  'channels.create',
  'channels.manage',
  'messages.read',
  'messages.send',
  'messages.update',
  'messages.delete',
] as const;

/** Capabilities held tenant-wide (from tenant roles): the administration.* family. */
export const TENANT_CAPABILITIES = [
  'administration.applications.read',
  'administration.overview.read',
  'administration.roles.read',
  'administration.roles.manage',
  'administration.settings.read',
  'administration.settings.manage',
  'administration.members.moderate',
] as const;

export type Capability = (typeof APPLICATION_CAPABILITIES)[number] | (typeof TENANT_CAPABILITIES)[number];

export const ENFORCED_CAPABILITIES: readonly Capability[] = [...APPLICATION_CAPABILITIES, ...TENANT_CAPABILITIES];

/** The one scope of user tokens (obtained by token exchange). */
export const USER_SCOPE = 'chat:access';

/**
 * Machine scopes. `chat:sync` grants every operation open to machines; the granular scopes grant
 * a slice. An operation lists the machine scopes it accepts; a token needs any one of them.
 */
export const MACHINE_SCOPES = {
  'chat:sync': 'every operation open to machine clients',
  'chat:conversations.read': 'list and read conversations',
  'chat:conversations.write': 'create, update, archive and delete conversations',
  'chat:messages.read': 'read message history',
  'chat:messages.write': 'send messages (on behalf of a member, or SYSTEM)',
  'chat:members.read': 'list conversation members',
  'chat:members.write': 'add and remove conversation members',
  'chat:users.read': 'look up users and read capabilities',
} as const;

export type MachineScope = keyof typeof MACHINE_SCOPES;

/**
 * What each machine scope grants, expressed as capabilities (shown by the capabilities routes;
 * machines are authorized by scope, never by capability).
 */
/** Machines never edit or delete messages (the contract refuses them there). */
const MACHINE_APPLICATION_CAPABILITIES = APPLICATION_CAPABILITIES.filter((c) => c !== 'messages.update' && c !== 'messages.delete');

export const SCOPE_CAPABILITIES: Record<MachineScope, readonly Capability[]> = {
  'chat:sync': MACHINE_APPLICATION_CAPABILITIES,
  'chat:conversations.read': ['conversations.read'],
  'chat:conversations.write': ['conversations.create', 'groups.create', 'groups.manage', 'channels.create', 'channels.manage'],
  'chat:messages.read': ['messages.read'],
  'chat:messages.write': ['messages.send'],
  'chat:members.read': ['conversations.read'],
  'chat:members.write': ['groups.manage', 'channels.manage'],
  'chat:users.read': [],
};

export function capabilitiesOfScopes(scopes: Iterable<string>): Capability[] {
  const out = new Set<Capability>();
  for (const s of scopes) for (const c of SCOPE_CAPABILITIES[s as MachineScope] ?? []) out.add(c);
  return [...out].sort();
}
