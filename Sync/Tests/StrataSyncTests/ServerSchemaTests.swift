import Foundation
import PostgresNIO
import Strata
import Testing

@testable import StrataSync

@Suite struct ServerSchemaTests {
    @Test func migratingTwiceCreatesTheTablesOnceWithTypedColumns() async throws {
        try await TestDatabase.with { database in
            _ = try await database.migratedSchema()
            _ = try await database.migratedSchema()
            let columns = try await database.rows(
                """
                SELECT column_name::text, data_type::text FROM information_schema.columns
                WHERE table_schema = '\(database.namespace)' AND table_name = 'SyncDog' ORDER BY column_name
                """)
            let types = Dictionary(uniqueKeysWithValues: columns.map { ($0[0]!, $0[1]!) })
            #expect(types["id"] == "bigint")
            #expect(types["name"] == "text")
            #expect(types["weight"] == "double precision")
            #expect(types["isGoodBoy"] == "boolean")
            #expect(types["birthday"] == "timestamp with time zone")
            #expect(types["photo"] == "bytea")
            #expect(types["chip"] == "uuid")
            #expect(types["owner"] == "text")  // the primary key type of SyncPerson
            #expect(types["address"] == "jsonb")
            #expect(types["extra"] == "jsonb")
            #expect(types["tricks"] == "jsonb")
            #expect(types["_strata_state"] == "jsonb")
            #expect(types["_strata_deleted"] == "boolean")
            let tables = try await database.rows(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = '\(database.namespace)' ORDER BY 1"
            )
            #expect(
                tables.map { $0[0]! } == [
                    "SyncDog", "SyncPerson", "strata_change_log", "strata_schema_version", "strata_scope",
                    "strata_upload",
                ])
            #expect(
                try await database.rows("SELECT component, version::text FROM strata_schema_version") == [
                    ["layout", "1"]
                ])
        }
    }

    @Test func aNewPropertyIsAddedAndExistingRowsKeepTheirValues() async throws {
        try await TestDatabase.with { database in
            var person = try #require(SyncPerson.sharedSchema())
            let age = try #require(person.properties.first { $0.columnName == "age" })
            person.properties.removeAll { $0.columnName == "age" }
            let before = try ServerSchema(namespace: database.namespace, objectSchemas: [person])
            try await before.migrate(database.client, logger: database.logger)
            let replica = Replica("a")
            let create = ObjectChange(
                objectType: "SyncPerson", primaryKey: .string("Ann"), created: replica.clock.now())
            _ = try await ServerMerge(schema: before, client: database.client, logger: database.logger)
                .apply(replica.batch([create]))

            person.properties.append(age)
            let after = try ServerSchema(namespace: database.namespace, objectSchemas: [person])
            try await after.migrate(database.client, logger: database.logger)
            _ = try await ServerMerge(schema: after, client: database.client, logger: database.logger)
                .apply(replica.batch([replica.updatePerson("Ann", age: 7)]))
            #expect(try await database.rows(#"SELECT name, age::text FROM "SyncPerson""#) == [["Ann", "7"]])
        }
    }

    @Test func aColumnOfAnotherTypeIsReportedAndLeftAlone() async throws {
        try await TestDatabase.with { database in
            _ = try await database.migratedSchema()
            var person = try #require(SyncPerson.sharedSchema())
            let index = try #require(person.properties.firstIndex { $0.columnName == "age" })
            person.properties[index].type = .string
            let changed = try ServerSchema(namespace: database.namespace, objectSchemas: [person])
            await #expect(throws: SyncError.self) {
                try await changed.migrate(database.client, logger: database.logger)
            }
            let type = try await database.rows(
                """
                SELECT data_type::text FROM information_schema.columns
                WHERE table_schema = '\(database.namespace)' AND table_name = 'SyncPerson' AND column_name = 'age'
                """)
            #expect(type == [["bigint"]])
        }
    }

    @Test func aTypeWithoutPrimaryKeyOrAReservedNameIsRefused() throws {
        var person = try #require(SyncPerson.sharedSchema())
        var keyless = person
        keyless.properties = keyless.properties.map { property in
            var property = property
            property.isPrimary = false
            return property
        }
        #expect(throws: SyncError.missingPrimaryKey(type: "SyncPerson")) {
            try ServerSchema(objectSchemas: [keyless])
        }
        person.properties[1].columnName = "_strata_state"
        #expect(throws: SyncError.self) { try ServerSchema(objectSchemas: [person]) }
    }
}
