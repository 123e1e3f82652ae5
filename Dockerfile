# memory-pg's command line in a container (docker-compose.yml's migrate, jobs and api services).
FROM python:3.11-slim
# The CPU build of torch: the default Linux wheel on PyPI carries CUDA (several GB).
ARG PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_EXTRA_INDEX_URL=${PIP_EXTRA_INDEX_URL} \
    PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 \
    PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml constraints.txt README.md alembic.ini ./
COPY memory_pg ./memory_pg
COPY migrations ./migrations
RUN pip install -c constraints.txt ".[llm,service]"
RUN useradd --create-home memory
USER memory
# The jobs service's volume: when consolidate last ran (owned by this user).
RUN mkdir -p /home/memory/jobs
# The bundled model runs on ONNX Runtime, exported once from its weights into the
# user's cache, with the int8 copy that embeds queries: done here, so a container
# starts without importing torch or quantising.
RUN python -c "from memory_pg.embedding import get_embedder; get_embedder('all-MiniLM-L6-v2').embed_query('warm-up')"
# memory-pg serve (the api service) listens here.
EXPOSE 8080
ENTRYPOINT ["memory-pg"]
CMD ["healthcheck"]
