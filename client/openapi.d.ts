// Generated from schema/openapi.json by `npm run client` (client/generate.ts). Do not edit.

export interface paths {
    "/notifications/vapid-public-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The web push (VAPID) public key; empty when web push is unavailable */
        get: operations["getVapidPublicKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The signed-in user: id, profile and what the token allows
         * @description Users only. The profile (display name, avatar) comes from the user's membership in the token's bound tenant, or in their first chat-enabled tenant; display_name falls back to the user id.
         */
        get: operations["getMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me/tenants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The chat-enabled tenants the user is an active member of
         * @description A token bound to one tenant (issued to an application client) sees that tenant only.
         */
        get: operations["listMyTenants"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/me/capabilities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's tenant-level permissions (administration.*)
         * @description The tenant-level (administration.*) capabilities granted by the user's tenant roles; application capabilities are read per application. Machines hold none at tenant level (their scopes act per application).
         */
        get: operations["getTenantCapabilities"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/me/capabilities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's permissions in one application
         * @description Users: the union of what their tenant roles and application roles grant there. Machines: the capabilities their scopes grant (chat:sync grants every application capability).
         */
        get: operations["getApplicationCapabilities"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/admin/applications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tenant's applications, as the identity provider last synced them */
        get: operations["listTenantApplications"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/admin/conversations/{conversation_id}/members/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a member from any conversation of the tenant (moderation); the member becomes REMOVED
         * @description Needs administration.members.moderate. DIRECT membership never changes (direct_conversation_immutable).
         */
        delete: operations["moderateRemoveMember"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/admin/overview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant at a glance: applications, members and conversations
         * @description applications: ACTIVE applications of the tenant at the IdP; chat_enabled_applications: those of them with chat enabled. members: distinct users with an ACTIVE membership in a (not deleted) conversation of the tenant; conversations: not deleted ones, by type.
         */
        get: operations["getTenantOverview"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/admin/role-permissions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The role-to-capability mapping, tenant-wide or of one application
         * @description Without application_id: the tenant roles and the application roles that apply to every application. With it: the application roles that apply in that application. capabilities is what the role grants in chat there: the override of this mapping, else (application mappings) the tenant-wide override, else the IdP's list; source says which.
         */
        get: operations["getRolePermissions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Replaces what one role grants in chat (or, with capabilities null, restores the inherited list)
         * @description Answers the whole updated mapping. Errors in this order: application_not_found (application_id), role_not_found (the role is not in that mapping), role_locked (tenant_owner), invalid_request (capability keys that are unknown or, on an application role, tenant-level; each listed).
         */
        patch: operations["updateRolePermissions"];
        trace?: never;
    };
    "/tenants/{tenant_id}/admin/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's chat settings
         * @description A tenant that never changed its settings gets the defaults: message_retention_days null (keep forever), updated_at null.
         */
        get: operations["getTenantSettings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Changes the tenant's chat settings; only the fields sent change
         * @description message_retention_days: an integer-like number from 1 to 36,500 (30 and 30.0 are the same), or null to keep messages forever. Messages older than that are deleted by the retention job at its next run (CHAT_RETENTION_INTERVAL_MS). An empty body changes nothing.
         */
        patch: operations["updateTenantSettings"];
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Users of the tenant who may chat in the application, by user id or display name prefix
         * @description Searches the users the service knows (those who have used chat, or were named by a machine), ordered by user_id, and answers only ACTIVE tenant members with access to the application. A bounded suggestion list, not paged: type more to narrow it.
         */
        get: operations["lookupUsers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Conversations of the context, most recently active first
         * @description Users: conversations they are an active member of, plus PUBLIC channels. Machines: every conversation of the context. Ties on last_activity_at are ordered by conversation_id, so paging is stable.
         */
        get: operations["listConversations"];
        put?: never;
        /**
         * Create a DIRECT, GROUP or CHANNEL conversation (a DIRECT of the same two users is answered instead)
         * @description Needs conversations.create, plus groups.create for GROUP or channels.create for CHANNEL. 201 with the conversation, also when a DIRECT of the same two members already existed (the status does not tell the two apart). Every member and the actor must be eligible tenant members with access to the application.
         */
        post: operations["createConversation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One conversation, with the caller’s role and exact unread count */
        get: operations["getConversation"];
        put?: never;
        post?: never;
        /**
         * Soft-delete a conversation (it disappears from every list; history is kept for retention)
         * @description Users only (machines: principal_not_allowed). GROUP: groups.manage, or groups.create as OWNER or ADMIN; CHANNEL: channels.manage; DIRECT: either member (the pair may then start a new DIRECT).
         */
        delete: operations["deleteConversation"];
        options?: never;
        head?: never;
        /**
         * Rename, describe, archive (read-only) or unarchive a conversation
         * @description GROUP: groups.manage, or groups.create as OWNER or ADMIN; CHANNEL: channels.manage; DIRECT: either member (no name). An ARCHIVED conversation accepts only status ACTIVE (unarchive); other changes are conversation_archived. Machines: chat:sync or chat:conversations.write.
         */
        patch: operations["updateConversation"];
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** History of a conversation, newest first; deleted messages appear as tombstones */
        get: operations["listMessages"];
        put?: never;
        /**
         * Send a message (users: as themselves; machines: on behalf of actor_user_id, or SYSTEM)
         * @description message_type defaults to TEXT, or FILE when attachments are sent. SYSTEM messages have no sender and are machine-only. reply_to_message_id must name a message of this conversation that is not deleted. Rate limit: 30 messages per 10 s per user (for machines: per actor_user_id).
         */
        post: operations["sendMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a message (it stays as a tombstone): its author (messages.update) or a moderator (messages.delete); never machines */
        delete: operations["deleteMessage"];
        options?: never;
        head?: never;
        /**
         * Edit a message: its author (messages.update) or a moderator (messages.delete)
         * @description The edited message has status EDITED and edited_at set. A deleted message cannot be edited (not_found).
         */
        patch: operations["editMessage"];
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Active members of a conversation, in joining order */
        get: operations["listMembers"];
        put?: never;
        /**
         * Add a member (or join a PUBLIC channel yourself)
         * @description GROUP: groups.manage, or groups.create as OWNER or ADMIN of the conversation. CHANNEL: channels.manage, or the caller joins a PUBLIC channel themselves. DIRECT: never (direct_conversation_immutable). Re-adding a member who left or was removed reactivates them. Machines may pass display_name and avatar_url as profile hints for a user the service has never seen (no profile of the user recorded yet); for a user already seen they are ignored, and what the IdP says always wins.
         */
        post: operations["addMember"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Leave (your own user_id: always allowed) or remove another member (the add rules apply) */
        delete: operations["removeMember"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}/reactions/{emoji}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** React to a message with an emoji (idempotent) */
        put: operations["addReaction"];
        post?: never;
        /** Take back your reaction (idempotent) */
        delete: operations["removeReaction"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/read": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mark the conversation read up to a message (never moves back) */
        post: operations["markRead"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/typing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Tell the other members you are typing (not stored; delivered as a typing event) */
        post: operations["typing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications/{application_id}/notifications/realtime-token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A short-lived, subscribe-only credential for the realtime stream
         * @description The stream covers the caller's own channel, the CHANNEL conversations the caller is an active member of, and optionally one PUBLIC channel being viewed (`conversation_id`). Open `stream_url` with an EventSource client; see docs/realtime.md for the stream format, resume and expiry.
         */
        get: operations["getRealtimeToken"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/presence/heartbeat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Tell the service the app is open: the caller is online for the presence window
         * @description Send while the app is open, about every half of the presence window (CHAT_PRESENCE_WINDOW_MS, default 60 s); the caller counts as online until the window passes without one. No body. Per account: one heartbeat covers every application of the tenant.
         */
        post: operations["presenceHeartbeat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/presence": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Online status of tenant members
         * @description user_ids: comma-separated, at most 100 distinct ids (more is invalid_request); ids that are not active members of the tenant are dropped; one entry per remaining id, in the order asked. Omitted: the caller's own entry only. last_seen_at is the last heartbeat, or null when none is known (never seen, or forgotten long after the window).
         */
        get: operations["getPresence"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/notifications/push/devices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Register a device for push notifications (idempotent)
         * @description platform web: `subscription` as PushSubscription.toJSON() gives it (endpoint https URL, keys.p256dh, keys.auth). platform fcm or apns: `token`, the native device token (delivered when the deployment configures FCM or APNs; otherwise stored only). Registering again is safe; a device registered by another user moves to the caller.
         */
        post: operations["registerPushDevice"];
        /**
         * Stop push to a device (idempotent)
         * @description token: a browser's subscription endpoint, or a native device token. Answers 204 whether or not the caller had it registered; another user's device is left alone.
         */
        delete: operations["unregisterPushDevice"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tenants/{tenant_id}/applications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The applications of the tenant the caller can chat in
         * @description Users only; for the service's own web app (no CORS). Applications that are ACTIVE, have chat enabled and that the user has access to, in the order the identity provider lists them. A token bound to an application sees that application only.
         */
        get: operations["listChatApplications"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        ErrorBody: {
            status_code: number;
            error: string;
            message: string | string[];
            path: string;
            /** Format: date-time */
            timestamp: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getVapidPublicKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        public_key: string;
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user_id: string;
                        /** @description falls back to the user id */
                        display_name: string;
                        avatar_url: string | null;
                        /** @description the OAuth client the token was issued to */
                        client_id: string;
                        scopes: string[];
                        tenant_id: string | null;
                        application_id: string | null;
                        /** Format: date-time */
                        token_expires_at: string;
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, principal_not_allowed */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listMyTenants: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            tenant_id: string;
                            name: string;
                            slug: string;
                            logo_url: string | null;
                        }[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getTenantCapabilities: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tenant_id: string;
                        application_id: string | null;
                        principal_type: "user" | "machine";
                        roles: string[];
                        capabilities: string[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getApplicationCapabilities: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tenant_id: string;
                        application_id: string | null;
                        principal_type: "user" | "machine";
                        roles: string[];
                        capabilities: string[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listTenantApplications: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            application_id: string;
                            name: string;
                            slug: string;
                            logo_url: string | null;
                            /** @description TENANT; other values may be added */
                            type: string;
                            /** @description ALL_TENANT_MEMBERS or ASSIGNED_USERS; other values may be added */
                            access_mode: string;
                            /** @description ACTIVE or DISABLED; other values may be added */
                            identity_status: string;
                            chat_enabled: boolean;
                            /** Format: date-time */
                            synced_at: string;
                        }[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    moderateRemoveMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                conversation_id: string;
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: direct_conversation_immutable */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getTenantOverview: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tenant: {
                            tenant_id: string;
                            name: string;
                            slug: string;
                            logo_url: string | null;
                        };
                        /** @description applications of the tenant whose identity status is ACTIVE */
                        applications: number;
                        /** @description of those, the ones with chat enabled */
                        chat_enabled_applications: number;
                        /** @description distinct users with an ACTIVE membership in a conversation of the tenant */
                        members: number;
                        conversations: {
                            direct: number;
                            group: number;
                            channel: number;
                            total: number;
                        };
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getRolePermissions: {
        parameters: {
            query?: {
                /** @description an application of the tenant; omit for the tenant-wide mapping */
                application_id?: string;
            };
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        application_id: string | null;
                        available_capabilities: {
                            key: string;
                            description: string;
                        }[];
                        missing_capabilities: string[];
                        items: {
                            role_id: string;
                            role: string;
                            display_name: string | null;
                            role_scope: "tenant" | "application";
                            application_id: string | null;
                            system: boolean;
                            /** @description true for tenant_owner: holds every capability, not editable */
                            locked: boolean;
                            /** @description what the role grants in chat here */
                            capabilities: string[];
                            /** @description what the IdP gives the role (an addition) */
                            idp_capabilities: string[];
                            /** @description where `capabilities` comes from: the IdP, the tenant-wide mapping, or this application mapping (an addition) */
                            source: "IDP" | "TENANT_OVERRIDE" | "APPLICATION_OVERRIDE";
                        }[];
                        note: string;
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    updateRolePermissions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    application_id?: string | null;
                    role_id: string;
                    capabilities: string[] | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        application_id: string | null;
                        available_capabilities: {
                            key: string;
                            description: string;
                        }[];
                        missing_capabilities: string[];
                        items: {
                            role_id: string;
                            role: string;
                            display_name: string | null;
                            role_scope: "tenant" | "application";
                            application_id: string | null;
                            system: boolean;
                            /** @description true for tenant_owner: holds every capability, not editable */
                            locked: boolean;
                            /** @description what the role grants in chat here */
                            capabilities: string[];
                            /** @description what the IdP gives the role (an addition) */
                            idp_capabilities: string[];
                            /** @description where `capabilities` comes from: the IdP, the tenant-wide mapping, or this application mapping (an addition) */
                            source: "IDP" | "TENANT_OVERRIDE" | "APPLICATION_OVERRIDE";
                        }[];
                        note: string;
                    };
                };
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, role_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: role_locked */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getTenantSettings: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message_retention_days: number | null;
                        updated_at: string | null;
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    updateTenantSettings: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    message_retention_days?: number | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message_retention_days: number | null;
                        updated_at: string | null;
                    };
                };
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    lookupUsers: {
        parameters: {
            query: {
                /** @description prefix of a user id or display name, case-insensitive; 2 to 64 characters after trimming */
                query: string;
                /** @description how many users, default 10, at most 20 (larger values are capped) */
                limit?: string;
            };
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            user_id: string;
                            /** @description falls back to the user id */
                            display_name: string;
                            avatar_url: string | null;
                        }[];
                    };
                };
            };
            /** @description Error: invalid_limit, invalid_request, query_too_long, query_too_short */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listConversations: {
        parameters: {
            query?: {
                type?: "DIRECT" | "GROUP" | "CHANNEL";
                /** @description next_cursor of the previous page */
                before?: string;
                /** @description page size, default 50, at most 100 (larger values are capped) */
                limit?: string;
            };
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: uuid */
                            conversation_id: string;
                            tenant_id: string;
                            application_id: string;
                            type: "DIRECT" | "GROUP" | "CHANNEL";
                            visibility: string | null;
                            name: string | null;
                            description: string | null;
                            /** @description ACTIVE or ARCHIVED */
                            status: string;
                            created_by_user_id: string | null;
                            created_by_client_id: string | null;
                            /** Format: date-time */
                            last_activity_at: string;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                            /** @description DIRECT and GROUP: ACTIVE members, at most 20; omitted for CHANNEL */
                            members?: {
                                user_id: string;
                                /** @description falls back to the user id */
                                display_name: string;
                                avatar_url: string | null;
                            }[];
                            member_count: number;
                            my_role?: string | null;
                            /** @description users only */
                            has_unread?: boolean;
                            /** @description users only, on get: exact number of unread messages */
                            unread_count?: number;
                        }[];
                        next_cursor: string | null;
                    };
                };
            };
            /** @description Error: invalid_cursor, invalid_limit, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createConversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    type: "DIRECT" | "GROUP" | "CHANNEL";
                    /** @description required for GROUP and CHANNEL */
                    name?: string;
                    description?: string;
                    /**
                     * @description CHANNEL only; default PUBLIC
                     * @constant
                     */
                    visibility?: "PUBLIC";
                    /** @description users: the other members (the caller is always added); machines: every member (required) */
                    member_user_ids?: string[];
                    actor_user_id?: string;
                };
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        conversation_id: string;
                        tenant_id: string;
                        application_id: string;
                        type: "DIRECT" | "GROUP" | "CHANNEL";
                        visibility: string | null;
                        name: string | null;
                        description: string | null;
                        /** @description ACTIVE or ARCHIVED */
                        status: string;
                        created_by_user_id: string | null;
                        created_by_client_id: string | null;
                        /** Format: date-time */
                        last_activity_at: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                        /** @description DIRECT and GROUP: ACTIVE members, at most 20; omitted for CHANNEL */
                        members?: {
                            user_id: string;
                            /** @description falls back to the user id */
                            display_name: string;
                            avatar_url: string | null;
                        }[];
                        member_count: number;
                        my_role?: string | null;
                        /** @description users only */
                        has_unread?: boolean;
                        /** @description users only, on get: exact number of unread messages */
                        unread_count?: number;
                    };
                };
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: actor_not_member, target_user_not_eligible */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getConversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        conversation_id: string;
                        tenant_id: string;
                        application_id: string;
                        type: "DIRECT" | "GROUP" | "CHANNEL";
                        visibility: string | null;
                        name: string | null;
                        description: string | null;
                        /** @description ACTIVE or ARCHIVED */
                        status: string;
                        created_by_user_id: string | null;
                        created_by_client_id: string | null;
                        /** Format: date-time */
                        last_activity_at: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                        /** @description DIRECT and GROUP: ACTIVE members, at most 20; omitted for CHANNEL */
                        members?: {
                            user_id: string;
                            /** @description falls back to the user id */
                            display_name: string;
                            avatar_url: string | null;
                        }[];
                        member_count: number;
                        my_role?: string | null;
                        /** @description users only */
                        has_unread?: boolean;
                        /** @description users only, on get: exact number of unread messages */
                        unread_count?: number;
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteConversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    updateConversation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description GROUP and CHANNEL only */
                    name?: string;
                    description?: string | null;
                    /** @description ARCHIVED: read-only; ACTIVE: unarchive */
                    status?: "ACTIVE" | "ARCHIVED";
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        conversation_id: string;
                        tenant_id: string;
                        application_id: string;
                        type: "DIRECT" | "GROUP" | "CHANNEL";
                        visibility: string | null;
                        name: string | null;
                        description: string | null;
                        /** @description ACTIVE or ARCHIVED */
                        status: string;
                        created_by_user_id: string | null;
                        created_by_client_id: string | null;
                        /** Format: date-time */
                        last_activity_at: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                        /** @description DIRECT and GROUP: ACTIVE members, at most 20; omitted for CHANNEL */
                        members?: {
                            user_id: string;
                            /** @description falls back to the user id */
                            display_name: string;
                            avatar_url: string | null;
                        }[];
                        member_count: number;
                        my_role?: string | null;
                        /** @description users only */
                        has_unread?: boolean;
                        /** @description users only, on get: exact number of unread messages */
                        unread_count?: number;
                    };
                };
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: conversation_archived */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listMessages: {
        parameters: {
            query?: {
                /** @description next_cursor of the previous page */
                before?: string;
                /** @description page size, default 50, at most 100 (larger values are capped) */
                limit?: string;
            };
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: uuid */
                            message_id: string;
                            /** Format: uuid */
                            conversation_id: string;
                            tenant_id: string;
                            application_id: string;
                            sender_user_id: string | null;
                            sender_client_id: string | null;
                            sender: {
                                user_id: string;
                                /** @description falls back to the user id */
                                display_name: string;
                                avatar_url: string | null;
                            } | null;
                            body: string;
                            /** @description TEXT, SYSTEM or FILE */
                            message_type: string;
                            reply_to_message_id: string | null;
                            attachments: {
                                file_id: string;
                                name: string;
                                mime_type: string;
                                size: number;
                                url: string | null;
                            }[];
                            /** @description ACTIVE, EDITED or DELETED */
                            status: string;
                            edited_at: string | null;
                            deleted_at: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                            reactions: {
                                emoji: string;
                                count: number;
                                reacted_by_me: boolean;
                            }[];
                            mentioned_user_ids: string[];
                            /** @description position in the conversation (1, 2, ...); an addition to the contract */
                            seq: number;
                        }[];
                        next_cursor: string | null;
                    };
                };
            };
            /** @description Error: invalid_cursor, invalid_limit, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    sendMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description at most 10000 characters (body_too_long); may be empty for FILE messages */
                    body: string;
                    message_type?: "TEXT" | "FILE" | "SYSTEM";
                    /** @description at most 10 (too_many_attachments) */
                    attachments?: {
                        file_id: string;
                        name: string;
                        mime_type: string;
                        /** @description bytes */
                        size: number;
                        url?: string | null;
                    }[];
                    actor_user_id?: string;
                    reply_to_message_id?: string;
                    mentioned_user_ids?: string[];
                };
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        message_id: string;
                        /** Format: uuid */
                        conversation_id: string;
                        tenant_id: string;
                        application_id: string;
                        sender_user_id: string | null;
                        sender_client_id: string | null;
                        sender: {
                            user_id: string;
                            /** @description falls back to the user id */
                            display_name: string;
                            avatar_url: string | null;
                        } | null;
                        body: string;
                        /** @description TEXT, SYSTEM or FILE */
                        message_type: string;
                        reply_to_message_id: string | null;
                        attachments: {
                            file_id: string;
                            name: string;
                            mime_type: string;
                            size: number;
                            url: string | null;
                        }[];
                        /** @description ACTIVE, EDITED or DELETED */
                        status: string;
                        edited_at: string | null;
                        deleted_at: string | null;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                        reactions: {
                            emoji: string;
                            count: number;
                            reacted_by_me: boolean;
                        }[];
                        mentioned_user_ids: string[];
                        /** @description position in the conversation (1, 2, ...); an addition to the contract */
                        seq: number;
                    };
                };
            };
            /** @description Error: body_too_long, invalid_json, invalid_request, too_many_attachments */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, system_message_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: actor_not_member, conversation_archived, invalid_reply, target_user_not_eligible */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
                message_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    editMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
                message_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    body: string;
                    mentioned_user_ids?: string[];
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        message_id: string;
                        /** Format: uuid */
                        conversation_id: string;
                        tenant_id: string;
                        application_id: string;
                        sender_user_id: string | null;
                        sender_client_id: string | null;
                        sender: {
                            user_id: string;
                            /** @description falls back to the user id */
                            display_name: string;
                            avatar_url: string | null;
                        } | null;
                        body: string;
                        /** @description TEXT, SYSTEM or FILE */
                        message_type: string;
                        reply_to_message_id: string | null;
                        attachments: {
                            file_id: string;
                            name: string;
                            mime_type: string;
                            size: number;
                            url: string | null;
                        }[];
                        /** @description ACTIVE, EDITED or DELETED */
                        status: string;
                        edited_at: string | null;
                        deleted_at: string | null;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                        reactions: {
                            emoji: string;
                            count: number;
                            reacted_by_me: boolean;
                        }[];
                        mentioned_user_ids: string[];
                        /** @description position in the conversation (1, 2, ...); an addition to the contract */
                        seq: number;
                    };
                };
            };
            /** @description Error: body_too_long, invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: conversation_archived */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listMembers: {
        parameters: {
            query?: {
                /** @description next_cursor of the previous page */
                before?: string;
                /** @description page size, default 50, at most 100 (larger values are capped) */
                limit?: string;
            };
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            user_id: string;
                            /** @description falls back to the user id */
                            display_name: string;
                            avatar_url: string | null;
                            /** Format: uuid */
                            member_id: string;
                            /** @description OWNER, ADMIN or MEMBER */
                            role: string;
                            /** @description ACTIVE, LEFT or REMOVED */
                            status: string;
                            /** Format: date-time */
                            joined_at: string;
                        }[];
                        next_cursor: string | null;
                    };
                };
            };
            /** @description Error: invalid_cursor, invalid_limit, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    addMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    user_id: string;
                    /** @description machines: profile hint for a user the service has never seen */
                    display_name?: string;
                    /**
                     * Format: uri
                     * @description machines only: the second profile hint
                     */
                    avatar_url?: string;
                };
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user_id: string;
                        /** @description falls back to the user id */
                        display_name: string;
                        avatar_url: string | null;
                        /** Format: uuid */
                        member_id: string;
                        /** @description OWNER, ADMIN or MEMBER */
                        role: string;
                        /** @description ACTIVE, LEFT or REMOVED */
                        status: string;
                        /** Format: date-time */
                        joined_at: string;
                    };
                };
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: conversation_archived, direct_conversation_immutable, target_user_not_eligible */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    removeMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_tenant_member, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: direct_conversation_immutable */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    addReaction: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
                message_id: string;
                /** @description the emoji itself, percent-encoded in the path */
                emoji: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message_id: string;
                        reactions: {
                            emoji: string;
                            count: number;
                            reacted_by_me: boolean;
                        }[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available, user_required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: conversation_archived */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    removeReaction: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
                message_id: string;
                /** @description the emoji itself, percent-encoded in the path */
                emoji: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message_id: string;
                        reactions: {
                            emoji: string;
                            count: number;
                            reacted_by_me: boolean;
                        }[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, missing_capability, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available, user_required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: conversation_archived */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    markRead: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description read up to this message seq; default: the latest message */
                    seq?: number;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        conversation_id: string;
                        last_read_seq: number;
                        unread_count: number;
                        has_unread: boolean;
                    };
                };
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available, user_required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    typing: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_conversation_member, not_tenant_member, tenant_not_available, user_required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: conversation_archived */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getRealtimeToken: {
        parameters: {
            query?: {
                conversation_id?: string;
            };
            header?: never;
            path: {
                tenant_id: string;
                application_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description opened with an EventSource client; subscribe-only; carries the credential in its query */
                        stream_url: string;
                        /** @description epoch milliseconds; reconnect with a fresh credential before it */
                        expires: number;
                        /** @description the caller's user id, so the client can recognise events about itself */
                        user_id: string;
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: application_not_found, not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    presenceHeartbeat: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, tenant_not_available, user_required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getPresence: {
        parameters: {
            query?: {
                /** @description comma-separated user ids, at most 100; omitted: the caller's own entry */
                user_ids?: string;
            };
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            user_id: string;
                            status: "online" | "offline";
                            last_seen_at: string | null;
                        }[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    registerPushDevice: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    platform: "web" | "fcm" | "apns";
                    subscription?: {
                        /** @description the push service URL of the subscription (https) */
                        endpoint: string;
                        expirationTime?: number | null;
                        keys: {
                            /** @description the browser's P-256 public key, URL-safe base64 */
                            p256dh: string;
                            /** @description the browser's 16-byte authentication secret, URL-safe base64 */
                            auth: string;
                        };
                    };
                    /** @description fcm and apns: the native device token */
                    token?: string;
                };
            };
        };
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    unregisterPushDevice: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description a browser: the subscription endpoint; a native device: its token */
                    token: string;
                };
            };
        };
        responses: {
            /** @description Success, no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Error: invalid_json, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listChatApplications: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            application_id: string;
                            name: string;
                            slug: string;
                            logo_url: string | null;
                        }[];
                    };
                };
            };
            /** @description Error: invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: invalid_token, token_revoked */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: client_context_mismatch, insufficient_scope, no_application_access, not_tenant_member, principal_not_allowed, tenant_not_available */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: rate_limited */
            429: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: server_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Error: identity_unavailable */
            503: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
}
