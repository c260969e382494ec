/**
 * Identity directory driver `embedded`: the development IdP running in this very process.
 * Answers are deep copies, so nothing the node keeps or changes is shared with the IdP's state.
 * Revocations are pushed synchronously (`onRevocation`), so the node needs no polling here.
 */
import type { DevIdp } from '../idp/dev-idp.ts';
import type {
  ApplicationRecord,
  CapabilityDef,
  ContextAnswer,
  ContextQuery,
  IdentityDirectory,
  RevocationEntry,
  RevocationPage,
  RoleRecord,
  TenantRecord,
  UserProfile,
} from './types.ts';

export class EmbeddedIdentityDirectory implements IdentityDirectory {
  readonly driver = 'embedded' as const;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly idp: DevIdp) {}

  issuer(): string {
    return this.idp.issuer();
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    return { keys: this.idp.jwks().keys.map((k) => structuredClone({ ...k })) };
  }

  async context(q: ContextQuery): Promise<ContextAnswer> {
    return structuredClone(this.idp.context(q));
  }

  async userTenants(userId: string): Promise<TenantRecord[]> {
    return structuredClone(this.idp.userTenants(userId));
  }

  async applications(tenantId: string): Promise<ApplicationRecord[]> {
    return structuredClone(this.idp.applications(tenantId));
  }

  async roles(tenantId: string, applicationId: string | null): Promise<RoleRecord[]> {
    return structuredClone(this.idp.roles(tenantId, applicationId));
  }

  async capabilityCatalog(): Promise<CapabilityDef[]> {
    return structuredClone(this.idp.capabilityCatalog());
  }

  async profiles(tenantId: string, userIds: string[]): Promise<UserProfile[]> {
    return structuredClone(this.idp.profiles(tenantId, userIds));
  }

  async revocations(after: string | null): Promise<RevocationPage> {
    return structuredClone(this.idp.revocations(after));
  }

  onRevocation(listener: (entry: RevocationEntry) => void): void {
    this.unsubscribe.push(this.idp.onRevocation((entry) => listener({ ...entry })));
  }

  /** Detaches the revocation listeners; the IdP itself belongs to whoever created it. */
  async close(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
  }
}
