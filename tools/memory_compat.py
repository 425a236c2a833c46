"""The reference MCP memory server's nine tools, over Loci's memory graph.

A client configured for `@modelcontextprotocol/server-memory` switches to
Loci by changing its command line: the tool names, argument shapes, result
shapes and descriptions below are the reference's (checked against its
2026.8.31 release). Two things differ, both on purpose: `search_nodes`
returns its entities ranked (an exact name first, then name, type and
observation matches by BM25) instead of in file order, and the data lives in
the memory graph (memory/graph/entities.py), where Loci's own `memory_*` tools see
it too.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from loci.memory.graph.entities import EntityGraph
from loci.tools.memory import check_query

__all__ = [
    "AddObservationsResult",
    "CompatTools",
    "Deleted",
    "Entity",
    "KnowledgeGraph",
    "ObservationAdd",
    "ObservationDeletion",
    "Relation",
]


class Entity(TypedDict):
    name: Annotated[str, Field(description="The name of the entity")]
    entityType: Annotated[str, Field(description="The type of the entity")]
    observations: Annotated[list[str], Field(description="An array of observation contents associated with the entity")]


Relation = TypedDict(
    "Relation",
    {
        "from": Annotated[str, Field(description="The name of the entity where the relation starts")],
        "to": Annotated[str, Field(description="The name of the entity where the relation ends")],
        "relationType": Annotated[str, Field(description="The type of the relation")],
    },
)


class ObservationAdd(TypedDict):
    entityName: Annotated[str, Field(description="The name of the entity to add the observations to")]
    contents: Annotated[list[str], Field(description="An array of observation contents to add")]


class ObservationDeletion(TypedDict):
    entityName: Annotated[str, Field(description="The name of the entity containing the observations")]
    observations: Annotated[list[str], Field(description="An array of observations to delete")]


class AddedObservations(TypedDict):
    entityName: str
    addedObservations: list[str]


class EntitiesResult(TypedDict):
    entities: list[Entity]


class RelationsResult(TypedDict):
    relations: list[Relation]


class AddObservationsResult(TypedDict):
    results: list[AddedObservations]


class Deleted(TypedDict):
    success: bool
    message: str


class KnowledgeGraph(TypedDict):
    entities: list[Entity]
    relations: list[Relation]


class CompatTools:
    """The reference server's tool set, bound to the entity view of one store."""

    def __init__(self, entities: EntityGraph) -> None:
        self.entities = entities

    async def create_entities(self, entities: list[Entity]) -> EntitiesResult:
        """Create multiple new entities in the knowledge graph"""
        created = await self.entities.create_entities(_plain(entities))
        return {"entities": created}

    async def create_relations(self, relations: list[Relation]) -> RelationsResult:
        """Create multiple new relations between entities in the knowledge graph. Relations should be in active voice"""
        created = await self.entities.create_relations(_plain(relations))
        return {"relations": created}

    async def add_observations(self, observations: list[ObservationAdd]) -> AddObservationsResult:
        """Add new observations to existing entities in the knowledge graph"""
        results = await self.entities.add_observations(_plain(observations))
        return {"results": results}

    async def delete_entities(
        self, entityNames: Annotated[list[str], Field(description="An array of entity names to delete")]
    ) -> Deleted:
        """Delete multiple entities and their associated relations from the knowledge graph"""
        await self.entities.delete_entities(entityNames)
        return {"success": True, "message": "Entities deleted successfully"}

    async def delete_observations(self, deletions: list[ObservationDeletion]) -> Deleted:
        """Delete specific observations from entities in the knowledge graph"""
        await self.entities.delete_observations(_plain(deletions))
        return {"success": True, "message": "Observations deleted successfully"}

    async def delete_relations(
        self, relations: Annotated[list[Relation], Field(description="An array of relations to delete")]
    ) -> Deleted:
        """Delete multiple relations from the knowledge graph"""
        await self.entities.delete_relations(_plain(relations))
        return {"success": True, "message": "Relations deleted successfully"}

    async def read_graph(self) -> KnowledgeGraph:
        """Read the entire knowledge graph"""
        return await self.entities.read_graph()

    async def search_nodes(
        self,
        query: Annotated[
            str, Field(description="The search query to match against entity names, types, and observation content")
        ],
    ) -> KnowledgeGraph:
        """Search for nodes in the knowledge graph based on a query"""
        return await self.entities.search_nodes(check_query(query))

    async def open_nodes(
        self, names: Annotated[list[str], Field(description="An array of entity names to retrieve")]
    ) -> KnowledgeGraph:
        """Open specific nodes in the knowledge graph by their names"""
        return await self.entities.open_nodes(names)

    def all(self) -> list[Any]:
        """The nine tools, in the reference server's order."""
        return [
            self.create_entities,
            self.create_relations,
            self.add_observations,
            self.delete_entities,
            self.delete_observations,
            self.delete_relations,
            self.read_graph,
            self.search_nodes,
            self.open_nodes,
        ]


def _plain(items: list[Any]) -> list[dict[str, Any]]:
    return [dict(item) for item in items]
